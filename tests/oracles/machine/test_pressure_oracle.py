"""The demand oracle: the reference demand against what an allocation reports, the bound
and the halves it uses."""

import oracles.machine.pressure_oracle as pressure_oracle
from agxir.ir import clone_function
from agxir.machine.lower_cf import lower_cf
from agxir.machine.regalloc import run_ra
from agxir.text import parse_function
from oracles.machine.pressure_oracle import (
    demand_difference,
    halves_used,
    mesa_demand_difference,
    reference_demand,
    reference_mesa_demand,
)

SSA = """\
func @f(u0:32) {
entry:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  if_icmp u0, #0 cond=ueq inv=0 -> left, right
left:
  %c:64 = imad %a, %b, #0 shift=0
  %d:32 = iadd %a, %a shift=0
  jump -> join
right:
  %e:32 = iadd %b, %b shift=0
  jump -> join
join:
  %p:32 = phi [%d, left], [%e, right]
  export %p slot=0
  export %a slot=1
  stop
}
"""


def allocated():
    exec_fn = parse_function(SSA)
    lower_cf(exec_fn)
    machine = clone_function(exec_fn)
    run_ra(machine)
    return exec_fn, machine


def test_the_reference_demands_by_hand():
    exec_fn, _ = allocated()
    # At %c in `left`: %a, %b (read by nothing later, but %c is dead: it still occupies a
    # quad at its definition) -> %a (2) + %c (4) after %b dies at %c; the allocator's count
    # frees %b first: 2 + 4 = 6. Mesa's late kill keeps %b there too and adds r0l: 9.
    assert reference_demand(exec_fn) == 6
    assert reference_mesa_demand(exec_fn) == 1 + 2 + 2 + 4


def test_a_right_allocation_passes():
    exec_fn, machine = allocated()
    assert machine.notes["demand"] == 6
    assert demand_difference(exec_fn, machine) is None
    assert demand_difference(exec_fn, machine, reported_demand=6) is None


def test_a_demand_counted_wrong_is_reported_with_its_threads():
    exec_fn, machine = allocated()
    assert demand_difference(exec_fn, machine, reported_demand=8) == (
        "the allocator counted a demand of 8 halves, the reference 6 (threads 1024 instead of 1024)"
    )
    machine.notes["demand"] = 110
    assert demand_difference(exec_fn, machine) == (
        "the allocator counted a demand of 110 halves, the reference 6 (threads 896 instead of 1024)"
    )
    del machine.notes["demand"]
    assert demand_difference(exec_fn, machine) == "the allocation does not record its demand"


def test_a_register_past_the_bound_is_reported():
    exec_fn, machine = allocated()
    machine.notes["bound"] = max(halves_used(machine))
    assert demand_difference(exec_fn, machine) == (
        f"register h{max(halves_used(machine))} is beyond the bound of "
        f"{machine.notes['bound']} halves"
    )


def test_fewer_halves_than_the_demand_means_values_share_a_register():
    exec_fn = parse_function("""\
func.exec @s(u0:32) {
b0:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  %c:32 = iadd %a, %b shift=0
  export %c slot=0
  stop
}
""")
    shared = parse_function("""\
func.machine @s(u0:32) demand=4 bound=256 {
b0:
  r1 = iadd u0, #1 shift=0
  r1 = iadd u0, #2 shift=0
  r1 = iadd r1, r1 shift=0
  export r1 slot=0
  stop
}
""")
    assert reference_demand(exec_fn) == 4
    assert demand_difference(exec_fn, shared) == (
        "2 halves used for a demand of 4: live values share a register"
    )


def test_mesa_demand_is_held_to_the_reference_at_every_point(monkeypatch):
    from agxir.machine import pressure
    from agxir.machine.pressure import DemandMap

    exec_fn, _ = allocated()
    assert mesa_demand_difference(exec_fn) is None
    right = pressure.demand

    def phis_twice(fn, liveness=None):  # Mesa 8cc96d64's count: the phis again at entry
        need = right(fn, liveness)
        wrong = DemandMap(dict(need.entry), dict(need.at), need.maximum, need.widest)
        for block in fn.blocks:
            wrong.entry[block] += sum(2 for _ in block.phis())
        return wrong

    monkeypatch.setattr(pressure_oracle, "demand", phis_twice)  # where the oracle reads it
    # r0l, %p and %a at join's entry: 5; the phi counted again: 7.
    assert mesa_demand_difference(exec_fn) == (
        "Mesa's demand at the entry of join is 7 halves, the reference 5"
    )
