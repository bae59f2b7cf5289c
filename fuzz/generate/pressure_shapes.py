"""The shapes that put the machine passes under pressure: what makes the register allocator
evict and fix up entry maps, and what makes copy lowering break cycles and swap.

In a pressure program (half the programs with the `pressure` group on), the program
builder (`program._Program`) asks this module for:

* `pressure_cfg`: seven times in eight, a CFG drawn mostly from loops (half of them
  breaking out from an if) and ifs without an else (a branch straight to its join is a
  critical edge: several in one function), seldom from unstructured regions (which
  control-flow lowering often declines);
* `header_phis`: at a loop header, three times in four, one or two groups of phis of one
  size each (16, 32 or 64 bits, so a function mixes them), 3 or 4 of them two times in
  three, else 2, whose back-edge sources rotate the group (the first takes the second's
  value, ..., the last the first's): after allocation the latch's phi copy is a cycle of
  registers, a swap for two. Entering the loop they take immediates, uniforms or earlier
  values (`entry_source`), so immediates and uniforms are moved into phis. Now and then
  `loop_step` breaks one rotation with a computed value (the cycle becomes a chain, which
  must be copied in order);
* `join_phis`: at a join, a phi, or a group of two to four of the widest size, taking
  immediates, uniforms or earlier values, exported at once (`observe`). The group is
  placed at the join's entry beside the live-ins, whose holes (`hold`) are too narrow
  for it: the join's entry is where the allocator evicts a live-in, and the edges into
  the join then need an entry fix-up;
* `fragment`: in a latch (or, in a function with no loop, at the end of an if side),
  narrow values of which every other one dies, then wide values: the holes the dead ones
  leave are too narrow for them, so at a tight bound the allocator must evict (move live
  values) to find them aligned registers;
* `hold` / `release`: in a preheader, values of mixed sizes that stay live across the
  loop and are read only at its exit (in a function with no loop, from the entry to the
  stop block), folded and exported there, so a value an eviction clobbered shows in the
  outputs. Under a tight register bound (`ra-demand`) the loop's own values displace
  them: the allocator evicts inside the loop, at a join's entry (or one side of an if)
  and fixes up the entry map of the header on the back edge (or of the join on the
  other side).
"""

from __future__ import annotations

from agxir.ir import Instruction, Operand
from agxir.opcodes import OPCODES
from fuzz.generate.cfg_shapes import (
    BRANCH,
    IF,
    IFELSE,
    JUMP,
    LATCH,
    LOOP,
    SEQ,
    SINGLE,
    STOP,
    UNSTRUCTURED,
    CFGShape,
    Loop,
    ShapeBuilder,
)
from fuzz.generate.choices import ChoiceSource
from fuzz.generate.features import Features
from fuzz.generate.operations import immediate

R = OPCODES
_PHI = R["phi"]
# Region kinds of a pressure CFG: loops (the rotating phi groups of their headers are the
# cycles and swaps) and ifs without an else (critical edges) first; unstructured regions
# now and then (their guarded back edges are where a loop breaks from inside an if).
_WEIGHTS = {SINGLE: 1, SEQ: 4, IF: 5, IFELSE: 1, LOOP: 8, UNSTRUCTURED: 1}


class _PressureShapes(ShapeBuilder):
    """`cfg_shapes`' builder with the region kinds of `_WEIGHTS`."""

    WEIGHTS = _WEIGHTS

    def loop(self, budget: int, depth: int) -> tuple[int, int]:
        """Half the loops with room: a do-while whose body breaks out from an if (`pre ->
        first part -> c; c -> rest or exit; rest's end is the latch, -> header or exit`):
        lowered as `if (c) break` with lanes that leave while others stay, and the exit a
        join of two edges from the loop, both critical."""
        source = self.source
        if budget < 5 or not source.boolean():
            return super().loop(budget, depth)
        start = len(self.shape.succs)
        pre = self.new()
        header, first_exit = self.region(1 + source.below((budget - 3) // 2), depth + 1)
        cond = self.new()
        used = len(self.shape.succs) - start
        rest_entry, latch = self.region(max(1, budget - used - 1), depth + 1)
        exit_block = self.new()
        self.link(pre, [header], JUMP)
        self.link(first_exit, [cond], JUMP)
        targets = [exit_block, rest_entry] if source.boolean() else [rest_entry, exit_block]
        self.link(cond, targets, BRANCH)
        targets = [exit_block, header] if source.boolean() else [header, exit_block]
        self.link(latch, targets, LATCH)
        self.shape.loops.append(Loop(pre, header, latch, exit_block, False, depth + 1))
        return pre, exit_block


def pressure_cfg(source: ChoiceSource, features: Features, *, max_blocks: int,
                 max_loop_depth: int) -> CFGShape:
    """A CFG shape of loops and ifs without an else (see the module docstring)."""
    builder = _PressureShapes(source, features, max(1, max_blocks), max_loop_depth)
    _, exit_block = builder.region(builder.max_blocks, 0)
    builder.shape.roles[exit_block] = STOP
    return builder.shape


def header_phis(em, incoming: list) -> list[list[Instruction]]:
    """At a loop header, three times in four: one group of phis of one size (3 or 4 two
    times in three, else 2), half the time a second group of another size. Each phi's
    back-edge source is the next one's value (`rotation`); the caller fills the sources
    when the predecessors are done."""
    below = em.below
    if not below(4):
        return []
    groups: list[list[Instruction]] = []
    sizes = list(em.sizes)
    for _ in range(1 + below(2)):
        if not sizes:
            break
        # The widest first half the time: wide phis placed beside the narrow values held
        # across the loop are what makes the allocator evict at the header's entry.
        size = sizes.pop(-1 if below(2) else below(len(sizes)))
        count = 2 if not below(3) else 3 + below(2)  # a swap, or a cycle of 3 or 4
        group = [_new_phi(em, size, incoming) for _ in range(count)]
        groups.append(group)
    return groups


def _new_phi(em, size: int, incoming: list) -> Instruction:
    value, _ = em.new_value(size)
    return Instruction(_PHI, value, [immediate(0)] * len(incoming), {}, list(incoming), False)


def rotation(group: list[Instruction]) -> dict[int, Instruction]:
    """id(phi) -> the phi whose value it takes on the back edge: the next one, cyclically."""
    return {id(phi): group[(i + 1) % len(group)] for i, phi in enumerate(group)}


def entry_source(em, size: int) -> Operand:
    """A phi source entering a loop or a join: an immediate (zero-extended: a 16-bit
    pattern, now and then one with its top bit set), a uniform of the size, or a value."""
    below = em.below
    r = below(6)
    scalars = em.scalars[size]
    if r < 2 or (r < 4 and not scalars and not em.pools[size]):
        return immediate(below(16) if r == 0 else 0x8000 | below(1 << 15))
    if r < 4 and scalars:
        return scalars[below(len(scalars))]
    pool = em.pools[size]
    return em.recent(pool) if pool else immediate(below(16))


def join_phis(em, incoming: list) -> list[Instruction]:
    """At a join, seven times in eight: a phi of any size (one time in seven), or two to
    four of the widest size (`_sizes`: 64 bits when the program has them), whose sources
    are immediates, uniforms or earlier values (`entry_source`). Several wide phis at
    the entry of a join whose live-ins are narrow values with holes between them (`hold`)
    do not fit beside them at a tight bound: the allocator evicts a live-in there."""
    below = em.below
    r = below(8)
    if not r:
        return []
    if r == 1 or len(em.sizes) < 2:
        return [_new_phi(em, em.sizes[below(len(em.sizes))], incoming)]
    _, wide = _sizes(em)
    return [_new_phi(em, wide, incoming) for _ in range(2 + below(3))]


def observe(em, op: Operand) -> None:
    """A join phi's value exported at once (exports on), so an immediate or uniform moved
    into it wrongly shows in the outputs, and the phi is never dead."""
    if em.f.exports:
        em.ins.append(Instruction(R["export"], None, [op], {"slot": em.below(8)}, [], False))


def broken_rotation(em, group: list[Instruction]) -> tuple[int, Operand] | None:
    """At the latch, one time in eight: one phi of the group takes its partner's value
    changed (`iadd next, #k`) instead of the value itself; (its index, the value)."""
    below = em.below
    if below(8):
        return None
    i = below(len(group))
    partner = group[(i + 1) % len(group)].dest
    value = em.emit(R["iadd"], partner.size, [Operand(partner), immediate(1 + below(200))],
                    {"shift": 0})
    return i, value


def hold(em) -> list[Operand]:
    """In a preheader, seven times in eight: 10 to 14 narrow values of which every other
    one dies at once (folded into one, its register left a hole), and one or two wide
    ones, all taken out of the value pools so nothing in the loop reads them; `release`
    reads them at the loop's exit. The holes between the held narrow values (at least 4,
    more than a tight bound's slack of 0-3 halves) are what a wide value in the loop
    (`fragment`) or a wide phi at a join (`join_phis`) cannot use: evicting a held value
    moves it inside the loop or at the join, and the back edge or the join's other edge
    must move it back (an entry fix-up)."""
    below = em.below
    if not below(8):
        return []
    narrow, wide = _sizes(em)
    held = _interleaved(em, narrow, 10 + below(5))
    for _ in range(1 + below(2)):
        held.append(_wide(em, wide))
    return held


def _sizes(em) -> tuple[int, int]:
    """(narrow, wide) among the program's sizes: 16 and 64 when it has both."""
    sizes = em.sizes
    if 16 in sizes:
        return 16, (64 if 64 in sizes else 32)
    return (32, 64) if 64 in sizes else (32, 32)


def _interleaved(em, narrow: int, count: int) -> list[Operand]:
    """`count` narrow values, every other one folded away at once; the live ones (and the
    fold), out of the value pools."""
    below = em.below
    kept: list[Operand] = []
    dying: list[Operand] = []
    for i in range(count):
        op = em.emit(R["mov_imm"], narrow, [], {"value": (0x5A5A + 37 * i + below(8)) & 0xFFFF})
        em.pools[narrow].remove(op)
        (dying if i % 2 else kept).append(op)
    while len(dying) > 1:  # two holes become one value: net, one hole per fold
        a, b = dying.pop(), dying.pop()
        dying.append(em.emit(R["iadd"], narrow, [a, b], {"shift": 0}))
        em.pools[narrow].remove(dying[-1])
    return kept + dying


def _wide(em, wide: int) -> Operand:
    """A fresh wide value, out of the value pools."""
    below = em.below
    if em.pools[wide] and below(2):
        x = em.recent(em.pools[wide])
        op = em.emit(R["iadd"], wide, [x, immediate(1 + below(255))], {"shift": 0})
    else:
        op = em.emit(R["mov_imm"], wide, [], {"value": (1 << (wide - 2)) | below(1 << 12)})
    em.pools[wide].remove(op)
    return op


def release(em, held: list[Operand]) -> None:
    """At a loop's exit (or the stop block): the held values folded per size into one
    value each, exported to a slot (when exports are on) and offered to the rest of the
    program."""
    by_size: dict[int, Operand] = {}
    for op in held:
        size = op.ref.size
        if size in by_size:
            # iadd mixes its sources: a clobbered held value changes the exported sum
            by_size[size] = em.emit(R["iadd"], size, [by_size[size], op], {"shift": 0})
        else:
            by_size[size] = op
            em.pools[size].append(op)
    for op in by_size.values():
        if em.f.exports:
            em.emit(R["export"], 0, [op], {"slot": em.below(8)})


def fragment(em) -> None:
    """Three times in four: up to 6 narrow values with holes between them, then 1-3 wide
    ones, folded and exported at once (see the module docstring)."""
    below = em.below
    if not below(4) or len(em.sizes) < 2:
        return
    narrow, wide = _sizes(em)
    values = _interleaved(em, narrow, 2 * below(4))
    values += [_wide(em, wide) for _ in range(1 + below(3))]
    release(em, values)
