"""Register demand: the reference count for an exec-level program, and the oracle that holds
an allocation to it.

The demand is the most 16-bit halves live at once: at each block entry, the live-in values
and the phi destinations; after each instruction, what is live after it plus its
destination if that is dead (a definition occupies a register even so). It is computed
from `oracles.liveness_reference` (per-point live sets found by walking back from each use),
not from the allocator's liveness.

An allocation must report exactly this demand (Mesa's RA sizes the register file and the
occupancy from it; 8cc96d64 fixed a count that took phis twice), must stay within the
bound it reports, and must use at least as many halves as the demand (more values live at
once than halves used would mean two live values share a register).
"""

from __future__ import annotations

from agxir.ir import R0L, Function, Register, Value
from agxir.machine.occupancy import threads_for_halves
from oracles.liveness_reference import reference_liveness


def reference_demand(fn: Function) -> int:
    """The demand of exec-level `fn`, in halves (registers such as r0l are not counted)."""
    ref = reference_liveness(fn)
    demand = 0
    for block in dict.fromkeys(fn.blocks):
        phi_dests = {ins.dest for ins in block.phis() if isinstance(ins.dest, Value)}
        entry = ref.live_in[block] | phi_dests
        demand = max(demand, sum(v.size // 16 for v in entry))
        start = len(phi_dests)
        for index in range(start, len(block.instructions)):
            ins = block.instructions[index]
            after = ref.at[(block, index + 1)]
            occupied = sum(v.size // 16 for v in after)
            if isinstance(ins.dest, Value) and ins.dest not in after:
                occupied += ins.dest.size // 16
            demand = max(demand, occupied)
    return demand


def halves_used(fn: Function) -> set[int]:
    """Every half a machine-level function names, r0l aside when it is the exec counter."""
    from agxir.machine.regalloc import has_control_flow

    counter = has_control_flow(fn)
    used: set[int] = set()
    for ins in fn.instructions():
        for ref in [src.ref for src in ins.srcs] + ins.defs():
            if isinstance(ref, Register) and not (counter and ref == R0L):
                used.update(ref.halves)
    return used


def demand_difference(exec_fn: Function, allocated: Function) -> str | None:
    """None when the allocation's recorded demand and bound are right; else what is wrong."""
    expected = reference_demand(exec_fn)
    reported = allocated.notes.get("demand")
    if reported is None:
        return "the allocation does not record its demand"
    if reported != expected:
        return (f"the allocator counted a demand of {reported} halves, the reference "
                f"{expected} (threads {threads_for_halves(reported)} instead of "
                f"{threads_for_halves(expected)})")
    used = halves_used(allocated)
    bound = allocated.notes.get("bound", 256)
    if used and max(used) >= bound:
        return f"register h{max(used)} is beyond the bound of {bound} halves"
    if len(used) < expected:
        return f"{len(used)} halves used for a demand of {expected}: live values share a register"
    return None
