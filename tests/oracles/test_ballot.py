"""The ballot on every level: the SSA interpreter's mask and its undefined cases, the same
program after the machine pipelines on the wave interpreter, and z3's per-thread view."""

from __future__ import annotations

import pytest
import z3

from agxir.ir import Instruction, Operand, Uniform, Value, clone_function
from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINES
from agxir.opcodes import OPCODES
from agxir.text import parse_function
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.interp.lanes import DIVERGENT_BALLOT
from oracles.machine.wave import run_wave
from oracles.outcomes import Returned, Undefined
from oracles.smt import encode_instruction

UNIFORM = """
func @uniform(u0:32, u1:32) {
entry:
  %x:32 = get_sr sr=thread_id
  %t:16 = icmp %x, u0 cond=ult inv=0
  %m:32 = ballot %t
  %f:32 = fcmp_ballot %x, u0 cond=ge inv=1
  if_icmp u1, #0 cond=ueq inv=0 -> then, join
then:
  %n:32 = icmp_ballot %x, #1 cond=ugt inv=0
  export %n slot=2
  jump -> join
join:
  %k:32 = ballot #3
  export %m slot=0
  export %f slot=1
  export %k slot=3
  stop
}
"""

DIVERGENT = """
func @divergent(u0:32) {
entry:
  %x:32 = get_sr sr=thread_id
  if_icmp %x, u0 cond=ult inv=0 -> then, join
then:
  %n:32 = ballot %x
  export %n slot=0
  jump -> join
join:
  %m:32 = ballot %x
  export %m slot=1
  stop
}
"""


def _outputs(outcome, slot):
    assert isinstance(outcome, Returned), outcome
    return [thread[slot] for thread in outcome.outputs]


def test_a_ballot_is_the_mask_of_the_threads_whose_condition_holds():
    fn = parse_function(UNIFORM)
    first, second = CompiledFunction(fn).run(
        [InputSet(6, {"u0": 2, "u1": 0}), InputSet(3, {"u0": 7, "u1": 1})]
    )
    assert _outputs(first, 0) == [0b11] * 6
    assert _outputs(first, 1) == [0b11] * 6  # !(x >= 2): the float compare, inverted
    assert _outputs(first, 2) == [0b111100] * 6  # the uniform branch was taken by all
    assert _outputs(first, 3) == [0b111111] * 6  # a nonzero constant: every thread
    assert _outputs(second, 0) == [0b111] * 3
    assert _outputs(second, 2) == [None] * 3


REJOINED = """
func @rejoined(u0:32, u1:32) {
entry:
  %x:32 = get_sr sr=thread_id
  if_icmp %x, u0 cond=ult inv=0 -> then, join
then:
  jump -> join
join:
  %m:32 = ballot %x
  export %m slot=0
  jump -> loop
loop:
  %i:32 = phi [#0, join], [%i2, loop]
  %i2:32 = iadd %i, #1 shift=0
  %n:32 = icmp_ballot %i2, #2 cond=ugt inv=0
  export %n slot=1
  if_icmp %i2, %x cond=ult inv=0 -> loop, exit
exit:
  %k:32 = ballot #1
  export %k slot=2
  stop
}
"""


def test_a_ballot_in_a_divergent_branch_is_undefined_but_not_before_or_without_one():
    fn = parse_function(DIVERGENT)
    split, all_taken, none_taken = CompiledFunction(fn).run(
        [InputSet(4, {"u0": 2}), InputSet(4, {"u0": 9}), InputSet(4, {"u0": 0})]
    )
    assert split == Undefined(DIVERGENT_BALLOT, 0)
    # When every thread goes the same way the wave has not diverged.
    assert _outputs(all_taken, 0) == [0b1110] * 4
    assert _outputs(none_taken, 1) == [0b1110] * 4


def test_threads_rejoin_in_a_block_on_no_cycle_but_not_in_a_loop():
    fn = parse_function(REJOINED)
    (joined,) = CompiledFunction(fn).run([InputSet(4, {"u0": 2})])
    # The if/else joined: every thread runs `join`'s ballot together; the loop exits when
    # i2 >= x, so thread 0 and 1 leave after one trip and the rest diverge from them.
    assert joined == Undefined(DIVERGENT_BALLOT, 2)
    (uniform_loop,) = CompiledFunction(fn).run([InputSet(1, {"u0": 2})])
    assert _outputs(uniform_loop, 0) == [0]  # thread 0: x = 0, a zero condition
    assert _outputs(uniform_loop, 2) == [1]
    fn = parse_function(REJOINED.replace("if_icmp %i2, %x", "if_icmp %i2, #3"))
    (rejoined,) = CompiledFunction(fn).run([InputSet(4, {"u0": 2})])
    assert _outputs(rejoined, 0) == [0b1110] * 4
    assert _outputs(rejoined, 1) == [0b1111] * 4  # the third trip: i2 = 3 > 2
    assert _outputs(rejoined, 2) == [0b1111] * 4


def test_a_run_of_more_than_32_threads_is_waves_of_32_each_diverging_alone():
    fn = parse_function(UNIFORM)
    small, big = CompiledFunction(fn).run(
        [InputSet(32, {"u0": 40, "u1": 1}), InputSet(40, {"u0": 35, "u1": 1})]
    )
    assert _outputs(small, 0) == [0xFFFFFFFF] * 32
    assert _outputs(big, 0) == [0xFFFFFFFF] * 32 + [0b111] * 8  # threads 32..34: bits 0..2
    fn = parse_function(DIVERGENT)
    # Threads 0..39 all take `then` when u0 = 40; with u0 = 36 only the second wave splits.
    together, second_split = CompiledFunction(fn).run(
        [InputSet(40, {"u0": 40}), InputSet(40, {"u0": 36})]
    )
    assert _outputs(together, 0) == [0xFFFFFFFE] * 32 + [0xFF] * 8
    assert second_split == Undefined(DIVERGENT_BALLOT, 32)


@pytest.mark.parametrize("pipeline", MACHINE_PIPELINES, ids="-".join)
def test_the_machine_pipelines_keep_the_ballots(pipeline):
    """The wave interpreter reduces over the active lanes: after lower-cf, a ballot in the
    uniform `then` region sees the lanes that took it, and one after a divergent if/else
    joined sees them all, as the SSA program does."""
    rejoined = REJOINED.replace("if_icmp %i2, %x", "if_icmp %i2, #3")
    cases = (
        (UNIFORM, [InputSet(6, {"u0": 2, "u1": 0}), InputSet(5, {"u0": 3, "u1": 1}),
                   InputSet(40, {"u0": 35, "u1": 0})]),
        (rejoined, [InputSet(4, {"u0": 2}), InputSet(36, {"u0": 33})]),
    )
    for text, inputs in cases:
        fn = parse_function(text)
        expected = CompiledFunction(fn).run(inputs)
        assert all(isinstance(outcome, Returned) for outcome in expected)
        lowered = clone_function(fn)
        for name in pipeline:
            MACHINE_PASSES[name].run(lowered)
        assert run_wave(lowered, inputs) == expected


def test_z3_proves_ballots_equal_exactly_when_their_conditions_agree():
    a, b = Uniform("a", 32), Uniform("b", 32)
    terms = {a: z3.BitVec("a", 32), b: z3.BitVec("b", 32)}

    def encoded(name, srcs, **attrs):
        ins = Instruction(OPCODES[name], Value("r", 32), [Operand(s) for s in srcs], attrs)
        return encode_instruction(ins, terms).result

    fused = encoded("icmp_ballot", [a, b], cond="ult", inv=1)
    same = encoded("icmp_ballot", [b, a], cond="ugt", inv=1)  # a < b is b > a
    other = encoded("icmp_ballot", [a, b], cond="ult", inv=0)
    solver = z3.Solver()
    solver.add(fused != same)
    assert solver.check() == z3.unsat
    solver = z3.Solver()
    solver.add(fused != other)
    assert solver.check() == z3.sat
