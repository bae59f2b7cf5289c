"""Today's liveness reference as it was before it kept live sets as bitmasks: a Python set
per program point, built by sweeping each block over the intervals `_live_points` finds.
Imported only by tests, as a second opinion on `oracles.liveness_reference`: both must give
the same sets, kills, pressure and `compare_liveness` verdicts and messages
(tests/oracles/test_liveness_reference_agreement.py).

The definition it computes is the one `oracles.liveness_reference` states: a value is live
at a point when a path from it reaches a use without passing the value's definition; a
phi reads its source at the end of the incoming predecessor and defines its destination at
its block's entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agxir.ir import Block, Function, Instruction, Value

__all__ = ["ReferenceLiveness", "reference_liveness", "compare_liveness"]

Point = tuple[Block, int]


@dataclass
class ReferenceLiveness:
    """`live_in[B]`: live just before B's first non-phi instruction, without B's own phi
    destinations; `live_out[B]`: live at the end of B. `at[(B, p)]`: live at point p."""

    live_in: dict[Block, frozenset[Value]] = field(default_factory=dict)
    live_out: dict[Block, frozenset[Value]] = field(default_factory=dict)
    kills: dict[Instruction, frozenset[Value]] = field(default_factory=dict)
    max_pressure: int = 0
    at: dict[Point, set[Value]] = field(default_factory=dict)


def _first_non_phi(block: Block) -> int:
    for index, ins in enumerate(block.instructions):
        if not ins.is_phi:
            return index
    return len(block.instructions)


def _predecessors(blocks: list[Block]) -> dict[Block, list[Block]]:
    members = set(blocks)
    preds: dict[Block, list[Block]] = {block: [] for block in blocks}
    for block in blocks:
        # The terminator's targets at the SSA level; the logical CFG at the exec level.
        for target in dict.fromkeys(block.successors):
            if target in members and block not in preds[target]:
                preds[target].append(block)
    return preds


def _live_points(
    value: Value,
    starts: list[Point],
    phi_home: Block | None,
    preds: dict[Block, list[Block]],
    first: dict[Block, int],
    defs_at: dict[Block, list[int]],
) -> dict[tuple[Block, int], list[int]]:
    """Every point from which a use in `starts` is reachable without crossing the
    definition of `value`. `phi_home` is the block whose phi defines it, if any;
    `defs_at[B]` the positions in B, past its phis, of instructions whose destination is
    `value`, ascending (almost always none or one).

    The walk from point (B, s) goes back one point at a time until it reaches a point just
    after a definition (d + 1, d the last definition below s) or B's first point; from the
    first point it goes on to the end of every predecessor (but in `phi_home`). So the
    points it reaches in B are one interval ending where the walk stops, and any walk that
    starts between the same two definitions stops at the same place: the walks are kept as
    one interval per (block, region below s), its lowest point fixed and its highest the
    highest start seen, and a walk that only raises the highest reaches nothing new below
    it. Returns {(block, stop): [stop, highest]}."""
    reached: dict[tuple[Block, int], list[int]] = {}
    stack = list(starts)
    while stack:
        block, s = stack.pop()
        bottom = first[block]
        stop = bottom
        defs = defs_at.get(block)
        if defs:
            for d in defs:
                if bottom <= d < s:
                    stop = d + 1
        key = (block, stop)
        interval = reached.get(key)
        if interval is not None:
            if s > interval[1]:
                interval[1] = s
            continue
        reached[key] = [stop, s]
        if stop == bottom and block is not phi_home:
            for pred in preds.get(block, ()):
                stack.append((pred, len(pred.instructions)))
    return reached


def reference_liveness(fn: Function) -> ReferenceLiveness:
    blocks = list(dict.fromkeys(fn.blocks))
    preds = _predecessors(blocks)
    result = ReferenceLiveness()

    first = {block: _first_non_phi(block) for block in blocks}
    phi_home: dict[Value, Block] = {}
    uses: dict[Value, list[Point]] = {}
    # Per value, where past the phis an instruction of each block writes it: the points
    # just after those are where a backward walk stops.
    defined: dict[Value, dict[Block, list[int]]] = {}
    for block in blocks:
        start = first[block]
        for index, ins in enumerate(block.instructions):
            dest = ins.dest
            if ins.is_phi:
                if dest is not None:
                    phi_home[dest] = block
                for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                    ref = src.ref
                    if isinstance(ref, Value):
                        uses.setdefault(ref, []).append((pred, len(pred.instructions)))
            else:
                for src in ins.srcs:
                    ref = src.ref
                    if isinstance(ref, Value):
                        uses.setdefault(ref, []).append((block, index))
            if dest is not None and index >= start:
                defined.setdefault(dest, {}).setdefault(block, []).append(index)

    # Each value's reached points are intervals; per block, a value enters the live set at
    # its interval's highest point and leaves it below the lowest. Sweeping each block from
    # its end down, the set at a point is a copy of the running set and its halves a running
    # sum (each value is counted once per point: one value's intervals in one block do not
    # overlap, they lie between different definitions).
    enter: dict[Block, dict[int, list[Value]]] = {block: {} for block in blocks}
    leave: dict[Block, dict[int, list[Value]]] = {block: {} for block in blocks}
    no_defs: dict[Block, list[int]] = {}
    for value, starts in uses.items():
        reached = _live_points(value, starts, phi_home.get(value), preds, first,
                               defined.get(value, no_defs))
        for (block, _stop), (low, high) in reached.items():
            enter[block].setdefault(high, []).append(value)
            leave[block].setdefault(low - 1, []).append(value)
    at = result.at
    kills = result.kills
    empty: frozenset[Value] = frozenset()
    pressure = 0
    for block in blocks:
        instructions = block.instructions
        end = len(instructions)
        start = first[block]
        entering, leaving = enter[block], leave[block]
        live: set[Value] = set()
        occupied = 0
        points: list[set[Value]] = [live] * (end + 1)
        held = [0] * (end + 1)  # the halves live at each point
        for p in range(end, start - 1, -1):
            if p in leaving:
                for value in leaving[p]:
                    live.discard(value)
                    occupied -= value.size // 16
            if p in entering:
                for value in entering[p]:
                    live.add(value)
                    occupied += value.size // 16
            points[p] = set(live)
            held[p] = occupied
        for p in range(start, end + 1):
            at[(block, p)] = points[p]
        phi_dests = {ins.dest for ins in instructions[:start] if ins.dest is not None}
        # The point before the first non-phi holds the phi destinations in use; they are
        # defined at entry, so they are not live into the block.
        result.live_in[block] = frozenset(points[start] - phi_dests)
        result.live_out[block] = frozenset(points[end])
        pressure = max(pressure, _halves(result.live_in[block] | phi_dests))
        for index, ins in enumerate(instructions):
            if ins.is_phi:
                kills[ins] = empty
                continue
            after = points[index + 1]
            killed = [src.ref for src in ins.srcs
                      if isinstance(src.ref, Value) and src.ref not in after]
            kills[ins] = frozenset(killed) if killed else empty
            occupied = held[index + 1]
            dest = ins.dest
            if dest is not None and dest not in after:
                occupied += dest.size // 16
            if occupied > pressure:
                pressure = occupied
    result.max_pressure = pressure
    return result


def _halves(values) -> int:
    return sum(value.size // 16 for value in values)


def _names(values) -> str:
    return ", ".join(sorted(f"%{value.name}" for value in values))


def _difference(where: str, got: frozenset[Value], want: frozenset[Value]) -> str | None:
    extra, missing = got - want, want - got
    if not extra and not missing:
        return None
    parts = []
    if extra:
        parts.append(f"analysis has extra {_names(extra)}")
    if missing:
        parts.append(f"analysis is missing {_names(missing)}")
    return f"{where}: " + "; ".join(parts)


def _what(ins: Instruction) -> str:
    if ins.dest is None:
        return ins.name
    sigil = "%" if isinstance(ins.dest, Value) else ""
    return f"{sigil}{ins.dest.name} = {ins.name}"


def compare_liveness(
    fn: Function, liveness: Any, reference: ReferenceLiveness | None = None
) -> str | None:
    """None when `liveness` (anything with live_in, live_out, kills and max_pressure, like
    agxir.liveness.Liveness) agrees with the reference on `fn`; else the first difference,
    block by block in function order (live_in, live_out, then each instruction's kills, the
    set live before the first non-phi instruction and the set live just after each one),
    then max_pressure. Per-point sets are compared when `liveness` offers `live_before` /
    `live_after`."""
    ref = reference if reference is not None else reference_liveness(fn)
    # Sets are compared for equality first (a set equals a frozenset of the same members);
    # only a difference builds the message, from the same operands as before.
    live_before = getattr(liveness, "live_before", None)
    live_after = getattr(liveness, "live_after", None)
    ref_at, ref_kills, got_kills = ref.at, ref.kills, liveness.kills
    empty: frozenset[Value] = frozenset()
    for block in dict.fromkeys(fn.blocks):
        for kind, got, want in (
            ("live_in", liveness.live_in, ref.live_in),
            ("live_out", liveness.live_out, ref.live_out),
        ):
            mine = got.get(block, empty)
            if type(mine) is frozenset and mine == want[block]:
                continue
            found = _difference(f"{kind}[{block.name}]", frozenset(mine), want[block])
            if found:
                return found
        first = _first_non_phi(block)
        for index, ins in enumerate(block.instructions):
            mine = got_kills.get(ins, empty)
            if not (type(mine) is frozenset and mine == ref_kills[ins]):
                found = _difference(
                    f"kills[{block.name}, instruction {index} ({_what(ins)})]",
                    frozenset(mine),
                    ref_kills[ins],
                )
                if found:
                    return found
            # The per-point sets RA and pressure consume, not only the block boundaries: the
            # point before the first non-phi instruction, then the point after each one.
            if index == first and live_before is not None:
                mine, want = live_before(ins), ref_at[(block, index)]
                if not (type(mine) is frozenset and mine == want):
                    found = _difference(
                        f"live before [{block.name}, instruction {index} ({_what(ins)})]",
                        frozenset(mine),
                        frozenset(want),
                    )
                    if found:
                        return found
            if live_after is not None and not ins.is_phi:
                mine, want = live_after(ins), ref_at[(block, index + 1)]
                if not (type(mine) is frozenset and mine == want):
                    found = _difference(
                        f"live after [{block.name}, instruction {index} ({_what(ins)})]",
                        frozenset(mine),
                        frozenset(want),
                    )
                    if found:
                        return found
    if liveness.max_pressure != ref.max_pressure:
        return (
            f"max_pressure: analysis has {liveness.max_pressure}, reference has "
            f"{ref.max_pressure} halves"
        )
    return None
