"""The liveness reference: liveness computed from its definition, to judge `agxir.liveness`.

A value v is live at a program point p when some path from p reaches a use of v without
passing v's definition. A phi's use of a source happens at the end of the incoming
predecessor (on the edge), and a phi defines its destination at the entry of its block.

This module does not iterate data-flow equations. For each value it walks backwards from
each of its uses over program points, stopping at the definition, and records every point
it reaches. The per-point sets then give live-in/live-out, kills and pressure directly.
It is slow by design (work proportional to the sum of all live ranges) and imports only
the IR. `compare_liveness` reports the first place an analysis disagrees.

Program points: (block, p) is the point just before instruction p, for p from the first
non-phi instruction to len(instructions) (the end of the block). The phis have no points of
their own: they all happen at once at the block entry.

Unreachable blocks follow the same definition: paths are paths of the CFG, whether or not
the entry reaches them (nothing is live because of where execution can start). An
instruction reads its sources before it writes its destination, so the point after it is
past its definition and its reads are before it. In dead code, where SSA dominance is
vacuous and the verifier lets an instruction read its own result (`b1: %s = iadd %s, #1
shift=0; jump -> b1`), %s is live before the instruction (the read) and after it (the next
iteration's read, reached without crossing the definition), so the instruction does not
kill it; `agxir.liveness` agrees (`tests/regressions/liveness_unreachable_self_use.agx`).
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
) -> set[Point]:
    """Every point from which a use in `starts` is reachable without crossing the
    definition of `value`. `phi_home` is the block whose phi defines it, if any."""
    seen: set[Point] = set()
    stack = list(starts)
    while stack:
        point = stack.pop()
        if point in seen:
            continue
        seen.add(point)
        block, p = point
        if p > first[block]:
            if block.instructions[p - 1].dest is value:
                continue
            stack.append((block, p - 1))
        elif block is not phi_home:
            stack.extend((pred, len(pred.instructions)) for pred in preds.get(block, ()))
    return seen


def reference_liveness(fn: Function) -> ReferenceLiveness:
    blocks = list(dict.fromkeys(fn.blocks))
    preds = _predecessors(blocks)
    result = ReferenceLiveness()

    phi_home: dict[Value, Block] = {}
    uses: dict[Value, list[Point]] = {}
    for block in blocks:
        for index, ins in enumerate(block.instructions):
            if ins.is_phi:
                if ins.dest is not None:
                    phi_home[ins.dest] = block
                for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                    if src.value is not None:
                        uses.setdefault(src.value, []).append((pred, len(pred.instructions)))
            else:
                for value in ins.uses():
                    uses.setdefault(value, []).append((block, index))

    first = {block: _first_non_phi(block) for block in blocks}
    for block in blocks:
        for p in range(first[block], len(block.instructions) + 1):
            result.at[(block, p)] = set()
    for value, starts in uses.items():
        for point in _live_points(value, starts, phi_home.get(value), preds, first):
            result.at.setdefault(point, set()).add(value)

    pressure = 0
    for block in blocks:
        instructions = block.instructions
        start = first[block]
        phi_dests = {ins.dest for ins in instructions[:start] if ins.dest is not None}
        # The point before the first non-phi holds the phi destinations in use; they are
        # defined at entry, so they are not live into the block.
        result.live_in[block] = frozenset(result.at[(block, start)] - phi_dests)
        result.live_out[block] = frozenset(result.at[(block, len(instructions))])
        pressure = max(pressure, _halves(result.live_in[block] | phi_dests))
        for index, ins in enumerate(instructions):
            if ins.is_phi:
                result.kills[ins] = frozenset()
                continue
            after = result.at[(block, index + 1)]
            result.kills[ins] = frozenset(v for v in ins.uses() if v not in after)
            occupied = _halves(after)
            if ins.dest is not None and ins.dest not in after:
                occupied += ins.dest.size // 16
            pressure = max(pressure, occupied)
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
    for block in dict.fromkeys(fn.blocks):
        for kind, got, want in (
            ("live_in", liveness.live_in, ref.live_in),
            ("live_out", liveness.live_out, ref.live_out),
        ):
            found = _difference(f"{kind}[{block.name}]", frozenset(got.get(block, ())), want[block])
            if found:
                return found
        first = _first_non_phi(block)
        for index, ins in enumerate(block.instructions):
            what = ins.name
            if ins.dest is not None:
                sigil = "%" if isinstance(ins.dest, Value) else ""
                what = f"{sigil}{ins.dest.name} = {ins.name}"
            found = _difference(
                f"kills[{block.name}, instruction {index} ({what})]",
                frozenset(liveness.kills.get(ins, ())),
                ref.kills[ins],
            )
            if found:
                return found
            # The per-point sets RA and pressure consume, not only the block boundaries: the
            # point before the first non-phi instruction, then the point after each one.
            if index == first and hasattr(liveness, "live_before"):
                found = _difference(
                    f"live before [{block.name}, instruction {index} ({what})]",
                    frozenset(liveness.live_before(ins)),
                    frozenset(ref.at[(block, index)]),
                )
                if found:
                    return found
            if not ins.is_phi and hasattr(liveness, "live_after"):
                found = _difference(
                    f"live after [{block.name}, instruction {index} ({what})]",
                    frozenset(liveness.live_after(ins)),
                    frozenset(ref.at[(block, index + 1)]),
                )
                if found:
                    return found
    if liveness.max_pressure != ref.max_pressure:
        return (
            f"max_pressure: analysis has {liveness.max_pressure}, reference has "
            f"{ref.max_pressure} halves"
        )
    return None
