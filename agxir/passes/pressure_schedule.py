"""Pressure scheduling: Mesa's `agx_pressure_schedule`, a bottom-up list scheduler that
reorders each block to lower register pressure before register allocation (on SSA).

For each region of a block (`agxir.passes.schedule_deps`: the runs between phis, exports
and the terminator) and its dependence graph, walking up from what is live after the
region, the scheduler repeatedly takes the ready instruction with the least pressure
change (Mesa's `calculate_pressure_delta`: a destination live below frees its width in
16-bit halves, each distinct source not yet live costs its width; the first such head in
Mesa's list order wins a tie). The new order is kept only if the region's maximum
pressure drops.

The pressure measure is Mesa's: the halves live at each point between the region's
instructions, its two ends included (Mesa counts from the live-out set, "off by a
constant", which gives the same comparison). A destination nobody reads adds nothing, as
in Mesa: it is not live at any point. Both orders start from the same live-out set and
reach the same live-in set (a region keeps its instructions), so the sets at the region's
ends, and everywhere outside it, do not change: the block's maximum pressure at these
points cannot rise, which is the invariant the `pressure` oracle holds the pass to
(`oracles.machine.schedule_oracle`). It is not the allocator's demand, which also counts
a dead destination at its definition and (in Mesa's RA) frees sources only after the
instruction: those may still rise, and `bench/pressure_schedule.py` counts how often.

Departures from Mesa: phis stay at the top of their block (Mesa's graph holds them like
any instruction, with their sources costed as reads in the block); mid-block exports cut
regions (see schedule_deps); there are no sample_mask/zs_emit/wait_pix to hoist or sink.
"""

from __future__ import annotations

from collections.abc import Callable

from agxir.ir import Block, Function, Instruction, Value
from agxir.liveness import Liveness
from agxir.passes.pass_ import Pass
from agxir.passes.schedule_deps import Dag, build_dag, is_fixed, regions

__all__ = ["PASS", "delta", "order_pressure", "pressure_schedule", "schedule_region"]


def _halves(value: Value) -> int:
    return value.size // 16


def delta(ins: Instruction, live: set[Value]) -> int:
    """Mesa's `calculate_pressure_delta`: live halves before `ins` minus after it, given
    the set `live` after it."""
    change = 0
    for dest in ins.defs():
        if isinstance(dest, Value) and dest in live:
            change -= _halves(dest)
    counted: set[Value] = set()
    for value in ins.uses():
        if value not in counted and value not in live:
            change += _halves(value)
        counted.add(value)
    return change


def _update(ins: Instruction, live: set[Value]) -> None:
    """Mesa's `agx_liveness_ins_update`: live before `ins` from live after it."""
    for dest in ins.defs():
        live.discard(dest)
    live.update(ins.uses())


def order_pressure(order: list[Instruction], live_out: frozenset[Value]) -> int:
    """The most halves live at a point of `order` above those live after it (Mesa's
    relative count: 0 at the end)."""
    live = set(live_out)
    pressure = highest = 0
    for ins in reversed(order):
        pressure += delta(ins, live)
        highest = max(highest, pressure)
        _update(ins, live)
    return highest


def choose(dag: Dag, live: set[Value]) -> int:
    """Mesa's `choose_instr`: the first head with the least pressure change."""
    best, least = dag.heads[0], None
    for node in dag.heads:
        change = delta(dag.instructions[node], live)
        if least is None or change < least:
            best, least = node, change
    return best


def schedule_region(
    instructions: list[Instruction], live_out: frozenset[Value], dag: Dag
) -> list[Instruction]:
    """The bottom-up greedy order of one region (top to bottom)."""
    live = set(live_out)
    picked: list[Instruction] = []
    while dag.heads:
        node = choose(dag, live)
        dag.prune(node)
        ins = instructions[node]
        picked.append(ins)
        _update(ins, live)
    if len(picked) != len(instructions):
        raise AssertionError("the dependence graph has a cycle")
    return picked[::-1]


def _live_after_each(block: Block, live_out: frozenset[Value]) -> list[frozenset[Value]]:
    """`after[i]`: the values live just after instruction i of `block`."""
    after: list[frozenset[Value]] = [frozenset()] * len(block.instructions)
    live = set(live_out)
    for index in range(len(block.instructions) - 1, -1, -1):
        ins = block.instructions[index]
        after[index] = frozenset(live)
        if not ins.is_phi:
            _update(ins, live)
    return after


def pressure_schedule(
    fn: Function,
    *,
    keep: Callable[[int, int], bool] = lambda new, old: new < old,
    fixed: Callable[[Instruction], bool] = is_fixed,
    dag: Callable[[list[Instruction]], Dag] = build_dag,
) -> bool:
    """Schedule every region of every block of SSA `fn` (see the module). `keep(new, old)`
    decides from the two maximum pressures whether the new order replaces the old; `fixed`
    says what stays in place; `dag` builds a region's graph. Only the zoo's wrong
    schedulers pass anything but the defaults. True iff some order changed."""
    liveness = Liveness(fn)
    changed = False
    for block in dict.fromkeys(fn.blocks):
        after = _live_after_each(block, liveness.live_out[block])
        for start, end in regions(block.instructions, fixed):
            old = block.instructions[start:end]
            live_out = after[end - 1]
            new = schedule_region(old, live_out, dag(old))
            if new == old:
                continue
            if keep(order_pressure(new, live_out), order_pressure(old, live_out)):
                block.instructions[start:end] = new
                changed = True
    return changed


def run(fn: Function) -> bool:
    return pressure_schedule(fn)


PASS = Pass(
    "pressure-schedule",
    "reorder each block bottom-up to lower register pressure (Mesa's agx_pressure_schedule)",
    run,
)
