"""The zoo's register-allocation and copy-lowering variants: each differs from the right pass
on a small program, and an oracle (the wave interpreter, the copy checker, the RA checker or
the demand oracle) catches it there while the right pass passes it."""

from pathlib import Path

import pytest

from agxir.ir import clone_function
from agxir.machine.lower_copies import lower_copies
from agxir.machine.lower_phis import lower_phis
from agxir.machine.regalloc import run_ra
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.zoo.machine_variants import MACHINE_VARIANTS
from oracles.inputs import random_input_sets
from oracles.machine import run_wave
from oracles.machine.copy_checker import check_copy_lowering
from oracles.machine.pressure_oracle import demand_difference
from oracles.machine.ra_checker import check_allocation

GOLDEN = Path(__file__).parents[1] / "golden" / "machine"
# The zoo's allocation and copy-lowering variants, as the zoo runs them.
ZOO = {unit.name: unit for unit in (v.make_pass() for v in MACHINE_VARIANTS)
       if unit.name.startswith(("zoo-ra-", "zoo-cop"))}

CARRIED = """\
func.exec @carried(u0:32) {
entry: -> pre1
  r0l = mov_imm value=0x0
  %tid:32 = get_sr sr=thread_id
  %k:32 = iadd u0, #5 shift=0
  %zero:32 = mov_imm value=0x0
pre1: -> loop
loop: -> cont2, exit3
  %i:32 = phi [%zero, pre1], [%next, cont2]
  %acc:32 = phi [%zero, pre1], [%sum, cont2]
  %t:32 = iadd %acc, %k shift=0
  %u:32 = iadd %t, #3 shift=0
  %sum:32 = iadd %u, %i shift=0
  %next:32 = iadd %i, #1 shift=0
  while_icmp %next, %tid cond=ugt inv=1 n=1
cont2: -> loop
  jmp_exec_any -> loop
  pop_exec n=1
exit3:
  export %sum slot=0
  stop
}
"""


def _golden(name: str):
    return parse_function((GOLDEN / f"lower_copies_{name}.agx").read_text())


def test_every_allocation_and_copy_variant_is_a_zoo_entry():
    assert set(ZOO) == {
        "zoo-copies-no-cycle-breaking", "zoo-copies-swap-as-two-moves", "zoo-copy-64-one-half",
        "zoo-ra-free-at-last-use-in-loop", "zoo-ra-demand-phis-twice",
    }


@pytest.mark.parametrize("zoo, golden", [
    ("zoo-copies-no-cycle-breaking", "Cycle3"),
    ("zoo-copies-swap-as-two-moves", "Swap"),
    ("zoo-copy-64-one-half", "64bit_overlap"),
    ("zoo-copy-64-one-half", "Immediate64"),
])  # fmt: skip
def test_copy_variants_are_caught_by_the_wave_interpreter_and_the_copy_checker(zoo, golden):
    before = _golden(golden)
    inputs = random_input_sets(before, 1, 3, 1)
    expected = run_wave(before, inputs)
    right, wrong = clone_function(before), clone_function(before)
    lower_copies(right)
    assert ZOO[zoo].run(wrong)
    assert run_wave(right, inputs) == expected and check_copy_lowering(before, right) == []
    assert run_wave(wrong, inputs) != expected
    assert check_copy_lowering(before, wrong)


def _through(fn, allocate):
    allocated = clone_function(fn)
    allocate(allocated)
    lowered = clone_function(allocated)
    lower_phis(lowered)
    lower_copies(lowered)
    return allocated, lowered


def test_freeing_a_loop_carried_value_at_its_last_use_is_caught():
    exec_fn = parse_function(CARRIED)
    inputs = random_input_sets(exec_fn, 8, 5, 2)
    expected = run_wave(exec_fn, inputs)
    right, right_lowered = _through(exec_fn, run_ra)
    assert check_allocation(exec_fn, right) == [] and run_wave(right_lowered, inputs) == expected
    wrong, wrong_lowered = _through(exec_fn, ZOO["zoo-ra-free-at-last-use-in-loop"].run)
    assert verify(wrong_lowered) == []  # well-formed: only the values are wrong
    assert run_wave(wrong_lowered, inputs) != expected
    errors = check_allocation(exec_fn, wrong)
    assert errors and "%k" in str(errors[0])


def test_counting_phis_twice_is_caught_by_the_demand_oracle():
    exec_fn = parse_function(CARRIED)
    right, _ = _through(exec_fn, run_ra)
    wrong, wrong_lowered = _through(exec_fn, ZOO["zoo-ra-demand-phis-twice"].run)
    assert demand_difference(exec_fn, right) is None
    assert right.notes["demand"] == 8 and wrong.notes["demand"] == 12
    assert "counted a demand of 12 halves, the reference 8" in demand_difference(exec_fn, wrong)
    # The registers are right: only the figure (and the occupancy it implies) is wrong.
    assert check_allocation(exec_fn, wrong) == []
