"""The interpreter's batching, fates and fuel, beyond what the golden files check."""

from __future__ import annotations

import pytest

from agxir.text import parse_function
from oracles.inputs import InputError, InputSet, random_input_sets
from oracles.interp import CompiledFunction
from oracles.outcomes import OutOfFuel, Returned, Undefined

COUNTDOWN = """\
func @countdown(u0:32, u1:ptr[64]) {
entry:
  %tid:32 = get_sr sr=thread_id
  %start:32 = and u0, #31
  jump -> loop
loop:
  %n:32 = phi [%start, entry], [%m, loop]
  %m:32 = iadd %n, #1.neg shift=0
  if_icmp %m, #0 cond=ueq inv=1 -> loop, exit
exit:
  %q:32 = amul %tid, u0
  device_store %q, u1, %tid fmt=i32 shift=0
  export %tid slot=1
  stop
}
"""


@pytest.fixture(scope="module")
def countdown():
    return CompiledFunction(parse_function(COUNTDOWN))


def test_input_sets_are_independent(countdown):
    sets = [
        InputSet(3, {"u0": 5}),
        InputSet(2, {"u0": 0x40000000}),  # starts at 0: counts down through 2**32
        InputSet(4, {"u0": 0x7FFFFFFF}),  # amul overflows in thread 2
        InputSet(1, {"u0": 1}),
    ]
    outcomes = countdown.run(sets, fuel=1000)
    assert isinstance(outcomes[0], Returned)
    assert outcomes[1] == OutOfFuel(1000)
    assert outcomes[2] == Undefined("amul overflow", 2)
    assert isinstance(outcomes[3], Returned)
    assert outcomes[0].outputs == ((None, 0), (None, 1), (None, 2))
    assert outcomes[0].memory["u1"][4:8] == (5).to_bytes(4, "little")
    assert outcomes[3].outputs == ((None, 0),)


def test_undefined_names_reason_and_thread(countdown):
    (outcome,) = countdown.run([InputSet(3, {"u0": 0x40000003})])
    assert outcome == Undefined("amul overflow", 2)


def test_runs_are_deterministic_and_reusable(countdown):
    sets = random_input_sets(countdown.fn, 8, seed=3, count=3)
    sets = [InputSet(s.threads, {"u0": s.scalars["u0"] % 50}, s.buffers) for s in sets]
    assert countdown.run(sets) == countdown.run(sets)


def test_fuel_counts_instructions_per_thread(countdown):
    # entry runs 3 instructions, each of the 10 loop trips 3, the exit block 4: 37 in all.
    (ok,) = countdown.run([InputSet(1, {"u0": 10})], fuel=37)
    (short,) = countdown.run([InputSet(1, {"u0": 10})], fuel=36)
    assert isinstance(ok, Returned) and isinstance(short, OutOfFuel)


def test_inputs_are_checked_against_the_function(countdown):
    with pytest.raises(InputError):
        countdown.run([InputSet(1, {"u0": 1 << 32})])
    with pytest.raises(InputError):
        countdown.run([InputSet(1, {"u0": 1}, {"u1": b"\0" * 3})])
    with pytest.raises(InputError):
        countdown.run([InputSet(0, {"u0": 1})])


def test_race_between_a_load_and_a_store_is_undefined():
    fn = parse_function(
        """\
func @f(u0:ptr[16]) {
b:
  %tid:32 = get_sr sr=thread_id
  %x:32 = device_load u0, #0 fmt=i32 shift=0
  %one:16 = icmp %tid, #1 cond=ueq inv=0
  if_icmp %one, #0 cond=ueq inv=0 -> done, write
write:
  device_store %tid, u0, #0 fmt=i32 shift=0
  jump -> done
done:
  stop
}
"""
    )
    compiled = CompiledFunction(fn)
    racy, alone = compiled.run([InputSet(2), InputSet(1)])
    assert racy == Undefined("data race", 1)
    assert isinstance(alone, Returned)


def test_blocks_on_cycles_are_found_in_linear_time_on_deep_nests():
    """Issue 19: the runner's cycle test was a search from every block (quadratic); it is
    Tarjan's components on an explicit stack: loops, self-loops and dead loops found, no
    block of a straight path or a diamond, under a 120-frame stack on a 1000-deep nest."""
    from agxir.text import parse_function
    from bench.scale import nested_loops
    from oracles.interp.runner import _blocks_on_cycles
    from tests.shallow_stack import shallow_stack

    fn = parse_function(nested_loops(1000))
    with shallow_stack():
        found = _blocks_on_cycles(fn.blocks)
    assert {b.name for b in fn.blocks} - {b.name for b in found} == {"entry", "end"}
    fn = parse_function(
        "func @f(u0:32) {\nb0:\n  if_icmp u0, #1 cond=ult inv=0 -> b1, b2\nb1:\n  jump -> b3\n"
        "b2:\n  jump -> b3\nb3:\n  stop\nb4:\n  jump -> b4\nb5:\n  jump -> b6\nb6:\n  jump -> b5\n}\n"
    )
    assert {b.name for b in _blocks_on_cycles(fn.blocks)} == {"b4", "b5", "b6"}
