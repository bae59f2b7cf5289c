"""The liveness reference: liveness computed from its definition, to judge `agxir.liveness`.

A value v is live at a program point p when some path from p reaches a use of v without
passing v's definition. A phi's use of a source happens at the end of the incoming
predecessor (on the edge), and a phi defines its destination at the entry of its block.

This module does not iterate data-flow equations; it walks backwards from the uses. Across
blocks, each value's walk goes from each block where it is read before any write (or from
the incoming block's end, for a phi's read) into the end of every predecessor, on through a
block that does not write it, stopping at one that does and at the entry of the block whose
phi defines it. The walks leaving one block travel together as one mask over integer block
ids, each bit stopping on its own, and each (value, block) is walked once. Within a block, the walks of every value go back one point at a time together,
from what the block walks left live at its end: the set just before an instruction is the
set just after it, less what it writes, plus what it reads (an instruction reads before it
writes). The per-point sets then give live-in, live-out, kills and pressure directly. Work
is proportional to the instructions and to the (value, block) pairs the walks cross, not to
any iteration, and this module imports only the IR. `compare_liveness` reports the first
place an analysis disagrees.

Program points: (block, p) is the point just before instruction p, for p from the first
non-phi instruction to len(instructions) (the end of the block). The phis have no points of
their own: they all happen at once at the block entry.

Sets are Python ints over the function's values, numbered once (bit i: the i-th value met),
one per point, so a point costs no set of its own: `ReferenceLiveness` makes frozensets of
Values only where they are read, and `compare_liveness` compares the analysis's sets
against the masks.

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

from collections.abc import Iterator, Mapping
from functools import partial
from itertools import compress, islice, repeat
from operator import add
from typing import Any

from agxir.ir import Block, Function, Instruction, Value

__all__ = ["ReferenceLiveness", "reference_liveness", "compare_liveness"]

Point = tuple[Block, int]
EMPTY: frozenset[Value] = frozenset()


def _members(mask: int, values: list[Value]) -> list[Value]:
    found = []
    while mask:
        low = mask & -mask
        found.append(values[low.bit_length() - 1])
        mask ^= low
    return found


class ReferenceLiveness:
    """`live_in[B]`: live just before B's first non-phi instruction, without B's own phi
    destinations; `live_out[B]`: live at the end of B. `at[(B, p)]`: live at point p.
    `kills[ins]`: the sources of `ins` not live after it. All frozensets of Values, made
    when read from the masks `reference_liveness` leaves, ints over `values` (`bit[v]`:
    v's bit). Those are indexed by position: block b's instruction or point k is
    `bases[b] + k` (`instructions[g]`: the instruction there, None at a block's end);
    `points[g]`: the set live at point g, `kill_masks[g]`: what instruction g kills,
    `after[g]`: whether instruction g has a point after it (a phi has not)."""

    def __init__(self, blocks: list[Block], values: list[Value], bit: dict[Value, int],
                 instructions: list[Instruction | None], bases: list[int], firsts: list[int],
                 points: list[int], kill_masks: list[int], after: list[bool],
                 in_masks: list[int], max_pressure: int) -> None:
        self.blocks, self.values, self.bit = blocks, values, bit
        self.instructions, self.bases, self.firsts = instructions, bases, firsts
        self.points, self.kill_masks, self.after = points, kill_masks, after
        self.in_masks = in_masks
        self.out_masks = [points[bases[b] + len(block.instructions)]
                          for b, block in enumerate(blocks)]
        self.max_pressure = max_pressure
        self.block_ids = {block: b for b, block in enumerate(blocks)}
        self.live_in: Mapping[Block, frozenset[Value]] = _BlockSets(self, in_masks)
        self.live_out: Mapping[Block, frozenset[Value]] = _BlockSets(self, self.out_masks)
        self.at: Mapping[Point, frozenset[Value]] = _PointSets(self)
        self.kills: Mapping[Instruction, frozenset[Value]] = _Kills(self)

    def members(self, mask: int) -> frozenset[Value]:
        return frozenset(_members(mask, self.values)) if mask else EMPTY


class _BlockSets(Mapping):
    def __init__(self, owner: ReferenceLiveness, masks: list[int]) -> None:
        self._owner, self._masks, self._made = owner, masks, {}

    def __getitem__(self, block: Block) -> frozenset[Value]:
        made = self._made.get(block)
        if made is None:
            made = self._made[block] = self._owner.members(
                self._masks[self._owner.block_ids[block]])
        return made

    def __iter__(self) -> Iterator[Block]:
        return iter(self._owner.blocks)

    def __len__(self) -> int:
        return len(self._owner.blocks)


class _PointSets(Mapping):
    """A block's point sets are made together when one is read, each from the one after
    it by the bits that differ."""

    def __init__(self, owner: ReferenceLiveness) -> None:
        self._owner, self._made = owner, {}

    def _block(self, block: Block) -> list[frozenset[Value]]:
        made = self._made.get(block)
        if made is None:
            owner = self._owner
            b = owner.block_ids[block]
            values, points = owner.values, owner.points
            top, end = owner.bases[b] + owner.firsts[b], owner.bases[b] + len(block.instructions)
            after = points[end]
            live = set(_members(after, values))
            made = [frozenset(live)]
            for g in range(end - 1, top - 1, -1):
                here = points[g]
                changed = here ^ after
                after = here
                if changed:
                    while changed:
                        one = changed & -changed
                        changed ^= one
                        if one & here:
                            live.add(values[one.bit_length() - 1])
                        else:
                            live.discard(values[one.bit_length() - 1])
                    made.append(frozenset(live))
                else:
                    made.append(made[-1])
            made.reverse()
            self._made[block] = made
        return made

    def __getitem__(self, key: Point) -> frozenset[Value]:
        block, p = key
        first = self._owner.firsts[self._owner.block_ids[block]]
        made = self._block(block)
        if not isinstance(p, int) or not first <= p < first + len(made):
            raise KeyError(key)
        return made[p - first]

    def __iter__(self) -> Iterator[Point]:
        owner = self._owner
        for b, block in enumerate(owner.blocks):
            for p in range(owner.firsts[b], len(block.instructions) + 1):
                yield block, p

    def __len__(self) -> int:
        owner = self._owner
        return sum(len(block.instructions) + 1 - owner.firsts[b]
                   for b, block in enumerate(owner.blocks))


class _Kills(Mapping):
    def __init__(self, owner: ReferenceLiveness) -> None:
        self._owner = owner
        self._where: dict[Instruction, int] | None = None

    def _positions(self) -> dict[Instruction, int]:
        if self._where is None:
            owner = self._owner
            self._where = {ins: g for g, ins in enumerate(owner.instructions)
                           if ins is not None}
        return self._where

    def __getitem__(self, ins: Instruction) -> frozenset[Value]:
        return self._owner.members(self._owner.kill_masks[self._positions()[ins]])

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self._positions())

    def __len__(self) -> int:
        return len(self._positions())


def reference_liveness(fn: Function) -> ReferenceLiveness:
    blocks = list(dict.fromkeys(fn.blocks))
    block_ids = {block: b for b, block in enumerate(blocks)}
    preds: list[list[int]] = [[] for _ in blocks]

    # One pass in order lays the instructions out by position (each block's, then a slot
    # for its end point), numbers the values (`bit`: Value -> its bit; `values`: bit i's
    # value) and notes what each instruction reads and writes and, per block, what it
    # writes (`written`) and what it reads before writing it (`read_first`).
    bit: dict[Value, int] = {}
    values: list[Value] = []
    instructions: list[Instruction | None] = []
    total = sum(len(block.instructions) for block in blocks) + len(blocks)
    source_bits, dest_bits = [0] * total, [0] * total
    halves_defined: list[int | None] = [None] * total  # None where no point follows: a phi, an end
    bases: list[int] = []
    firsts: list[int] = []
    written: list[int] = []
    read_first: list[int] = []
    entry_phi_dests: list[list[Any]] = []
    phi_home: dict[Value, int] = {}
    phi_uses: list[tuple[int, Block]] = []
    for b, block in enumerate(blocks):
        # The terminator's targets at the SSA level; the logical CFG at the exec level.
        for target in dict.fromkeys(block.successors):
            t = block_ids.get(target)
            if t is not None:
                preds[t].append(b)
        g = base = len(instructions)
        bases.append(base)
        instructions.extend(block.instructions)
        instructions.append(None)
        writes = reads = 0
        phi_dests: list[Any] = []
        first = -1
        for ins in block.instructions:
            dest = ins.dest
            if ins.opcode.name == "phi":  # Instruction.is_phi, without the property's call
                for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                    ref = src.ref
                    if isinstance(ref, Value):
                        found = bit.get(ref)
                        if found is None:
                            found = bit[ref] = 1 << len(values)
                            values.append(ref)
                        phi_uses.append((found, pred))
                if dest is not None:
                    phi_home[dest] = b
                    if first < 0:
                        phi_dests.append(dest)
                    if isinstance(dest, Value):
                        found = bit.get(dest)
                        if found is None:
                            found = bit[dest] = 1 << len(values)
                            values.append(dest)
                        if first >= 0:  # past the first non-phi, a phi writes where it is
                            dest_bits[g] = found
                            writes |= found
                g += 1
                continue
            if first < 0:
                first = g - base
            sources = 0
            for src in ins.srcs:
                ref = src.ref
                if isinstance(ref, Value):
                    found = bit.get(ref)
                    if found is None:
                        found = bit[ref] = 1 << len(values)
                        values.append(ref)
                    sources |= found
            if sources:
                source_bits[g] = sources
                reads |= sources & ~writes
            if dest is None:
                halves_defined[g] = 0
            else:
                halves_defined[g] = dest.size // 16
                if isinstance(dest, Value):
                    found = bit.get(dest)
                    if found is None:
                        found = bit[dest] = 1 << len(values)
                        values.append(dest)
                    dest_bits[g] = found
                    writes |= found
            g += 1
        firsts.append(first if first >= 0 else len(block.instructions))
        written.append(writes)
        read_first.append(reads)
        entry_phi_dests.append(phi_dests)

    # The walks across blocks. Each bit is one value's walk: from a block that reads it
    # before writing it into the end of every predecessor, and from a phi's read into the
    # end of the incoming block; on from a block's end through the block unless the block
    # writes the value, and from its first point into its predecessors unless its phi
    # defines the value. The walks leaving one block go together, as one mask, and a bit
    # goes no further where its value's walk has been already: `live_out[b]`, the values
    # whose walks reached b's end; `through[b]`, those that reached its first point.
    homes = [0] * len(blocks)
    for value, b in phi_home.items():
        homes[b] |= bit.get(value, 0)
    live_out = [0] * len(blocks)
    through = list(read_first)
    stack = []
    for b, reads in enumerate(read_first):
        leaving = reads & ~homes[b]
        if leaving:
            stack.extend((p, leaving) for p in preds[b])
    edge_reads: dict[Block, int] = {}
    for one, pred in phi_uses:
        edge_reads[pred] = edge_reads.get(pred, 0) | one
    stack.extend((block_ids[pred], reads) for pred, reads in edge_reads.items())
    while stack:
        p, arriving = stack.pop()
        arriving &= ~live_out[p]
        if arriving:
            live_out[p] |= arriving
            arriving &= ~(written[p] | through[p])
            if arriving:
                through[p] |= arriving
                arriving &= ~homes[p]
                if arriving:
                    stack.extend((q, arriving) for q in preds[p])

    # Within each block, from its end up, every value's walk goes back one point at a time:
    # the set before an instruction is the set after it less what it writes, plus what it
    # reads. `held`, the set's halves, follows it for the pressure.
    value_halves = [value.size // 16 for value in values]
    points, kill_masks, in_masks = [0] * total, [0] * total, []
    pressure = 0
    for b in range(len(blocks)):
        end = bases[b + 1] - 1 if b + 1 < len(blocks) else total - 1
        top = bases[b] + firsts[b]
        live = live_out[b]
        held = sum(value_halves[one.bit_length() - 1] for one in _bits(live))
        points[end] = live
        for g in range(end - 1, top - 1, -1):
            halves = halves_defined[g]
            dest = dest_bits[g]
            if halves is None:  # a phi past the first non-phi: it writes, reads on edges
                if dest & live:
                    live ^= dest
                    held -= value_halves[dest.bit_length() - 1]
                points[g] = live
                continue
            sources = source_bits[g]
            if sources:
                killed = sources & ~live
                if killed:
                    kill_masks[g] = killed
            if dest & live:
                if held > pressure:
                    pressure = held
                live ^= dest
                held -= halves
            elif held + halves > pressure:
                # A definition occupies a register at its instruction even when dead.
                pressure = held + halves
            if sources:
                born = sources & ~live
                if born:
                    live |= born
                    for one in _bits(born):
                        held += value_halves[one.bit_length() - 1]
            points[g] = live
        # The point before the first non-phi holds the phi destinations in use; they are
        # defined at entry, so they are not live into the block, but occupy registers there.
        phi_mask = 0
        for dest in set(entry_phi_dests[b]):
            found = bit.get(dest, 0)
            phi_mask |= found
            if not found & live:
                held += dest.size // 16
        in_masks.append(live & ~phi_mask)
        if held > pressure:
            pressure = held
    after = [halves is not None and ins is not None
             for halves, ins in zip(halves_defined, instructions, strict=True)]
    return ReferenceLiveness(blocks, values, bit, instructions, bases, firsts, points,
                             kill_masks, after, in_masks, pressure)


def _bits(mask: int) -> Iterator[int]:
    while mask:
        one = mask & -mask
        yield one
        mask ^= one


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
    live_before = getattr(liveness, "live_before", None)
    live_after = getattr(liveness, "live_after", None)
    if not _agrees_everywhere(fn, liveness, ref, live_before, live_after):
        found = _first_difference(fn, liveness, ref, live_before, live_after)
        if found:
            return found
    if liveness.max_pressure != ref.max_pressure:
        return (
            f"max_pressure: analysis has {liveness.max_pressure}, reference has "
            f"{ref.max_pressure} halves"
        )
    return None


def _agrees_everywhere(fn: Function, liveness: Any, ref: ReferenceLiveness,
                       live_before, live_after) -> bool:
    """Whether every set `_first_difference` compares is equal: the analysis's frozensets
    turned into masks over the reference's values, each a sum of distinct bits. Anything
    else says no and leaves the verdict to `_first_difference`: a value the reference does
    not know, and any answer that is no frozenset (a list could hold a value twice, and
    twice a bit is the next one). The loops run inside map, not in Python."""
    blocks = ref.blocks
    if list(dict.fromkeys(fn.blocks)) != blocks:
        return False
    masks = partial(map, ref.bit.__getitem__)
    only_frozensets = {frozenset}
    try:
        for got, want in ((liveness.live_in, ref.in_masks), (liveness.live_out, ref.out_masks)):
            sets = list(map(got.get, blocks, repeat(EMPTY)))
            if set(map(type, sets)) - only_frozensets or list(map(sum, map(masks, sets))) != want:
                return False
        # Most instructions kill nothing: only the sets that are not empty are summed.
        instructions, kill_masks = ref.instructions, ref.kill_masks
        kills = list(map(liveness.kills.get, instructions, repeat(EMPTY)))
        if (set(map(type, kills)) - only_frozensets
                or list(map(bool, kills)) != list(map(bool, kill_masks))
                or list(map(sum, map(masks, compress(kills, kills))))
                != list(compress(kill_masks, kills))):
            return False
        points = ref.points
        if live_before is not None:
            firsts = [g for g in map(add, ref.bases, ref.firsts) if instructions[g] is not None]
            sets = list(map(live_before, [instructions[g] for g in firsts]))
            if (set(map(type, sets)) - only_frozensets
                    or list(map(sum, map(masks, sets))) != [points[g] for g in firsts]):
                return False
        if live_after is not None:
            sets = list(map(live_after, compress(instructions, ref.after)))
            if (set(map(type, sets)) - only_frozensets
                    or list(map(sum, map(masks, sets)))
                    != list(compress(islice(points, 1, None), ref.after))):
                return False
    except Exception:  # whatever it is, `_first_difference` meets it in the same order
        return False
    return True


def _first_difference(fn: Function, liveness: Any, ref: ReferenceLiveness,
                      live_before, live_after) -> str | None:
    got_kills, ref_kills, ref_at = liveness.kills, ref.kills, ref.at
    for block in dict.fromkeys(fn.blocks):
        for kind, got, want in (
            ("live_in", liveness.live_in, ref.live_in),
            ("live_out", liveness.live_out, ref.live_out),
        ):
            mine = got.get(block, EMPTY)
            if type(mine) is frozenset and mine == want[block]:
                continue
            found = _difference(f"{kind}[{block.name}]", frozenset(mine), want[block])
            if found:
                return found
        first = ref.firsts[ref.block_ids[block]]
        for index, ins in enumerate(block.instructions):
            mine = got_kills.get(ins, EMPTY)
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
    return None
