"""Register allocation: alignment, r0l, the bound, the recorded demand, and that the RA
checker and the demand oracle accept what it produces on generated programs."""

import pytest

from agxir.ir import R0L, Register, clone_function
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.machine.regalloc import RegisterBoundExceeded, allocate, run_ra
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig, build_case
from oracles.machine.pressure_oracle import demand_difference, reference_demand
from oracles.machine.ra_checker import check_allocation


def _exec(text: str):
    fn = parse_function(text)
    lower_cf(fn)
    return fn


WIDE = """\
func @w(u0:32) {
b0:
  %a:16 = mov_imm value=0x1
  %b:64 = u2u64 u0
  %c:32 = mov_imm value=0x2
  %d:64 = iadd %b, %c shift=0
  export %a slot=0
  export %d slot=1
  export %c slot=2
  export %b slot=3
  stop
}
"""


def test_registers_are_naturally_aligned_and_the_demand_is_recorded():
    fn = _exec(WIDE)
    allocation = allocate(fn)
    for value, register in allocation.registers.items():
        assert register.size == value.size and register.aligned
    assert allocation.demand == reference_demand(fn) == 1 + 4 + 2 + 4
    run_ra(fn)
    assert fn.level == "machine" and fn.notes["demand"] == allocation.demand
    assert verify(fn) == []


def test_r0l_is_reserved_only_under_control_flow():
    with_cf = _exec(open("tests/golden/diverging_branches.agx").read())
    assert all(not r.overlaps(R0L) for r in allocate(with_cf).registers.values())
    straight = _exec("func @s() {\nb0:\n  %x:16 = mov_imm value=0x3\n  export %x slot=0\n  stop\n}\n")
    assert allocate(straight).registers[next(iter(allocate(straight).registers))] == Register(0, 16)


def test_a_demand_over_the_bound_is_an_error_not_a_wrong_allocation():
    with pytest.raises(RegisterBoundExceeded, match="within 8 halves"):
        allocate(_exec(WIDE), bound=8)


def test_generated_programs_pass_the_ra_checker_and_the_demand_oracle():
    config = CampaignConfig(seed=21, pipelines=[])
    checked = 0
    for index in range(40):
        fn, _ = build_case(21, index, config)
        if structurable(fn):
            continue
        exec_fn = clone_function(fn)
        lower_cf(exec_fn)
        allocated = clone_function(exec_fn)
        run_ra(allocated)
        assert check_allocation(exec_fn, allocated) == [], index
        assert demand_difference(exec_fn, allocated) is None, index
        assert verify(allocated) == [], index
        checked += 1
    assert checked >= 25
