"""Backward liveness over the logical CFG of a register-level function, for whatever unit a
pass tracks: 16-bit halves (`fuse-exec-cmp`) or vreg indices (`vreg-ra`,
`reuse-conversion`).

Registers are not SSA, so there is no value to follow: a unit is live where some path over
the logical CFG (each lane follows it; inactive lanes keep their registers) reads it
before writing it. A pass says what one instruction reads and what it kills (a write that
ends the unit's liveness: every written half, but for a vreg only a write at its widest
size); this module owns the per-block summary, the fixpoint and the walk back inside a
block. The copy checker (`oracles.machine.copy_checker`) keeps its own per-half liveness
on purpose: an oracle's reference does not share code with the passes it judges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agxir.ir import Block, Instruction

__all__ = ["Accesses", "live_after", "live_out"]

# (units read, units killed) by one instruction.
Accesses = Callable[[Instruction], tuple[set, set]]


def live_out(blocks: Iterable[Block], accesses: Accesses,
             successors: Callable[[Block], list[Block]] | None = None) -> dict[Block, set]:
    """The units some path over the logical CFG may read after each block before a kill.
    `successors`: a block's logical successors (default `Block.successors`; a zoo variant
    of a pass may walk others)."""
    successors = successors or (lambda block: block.successors)
    blocks = list(blocks)
    local: dict[Block, tuple[set, set]] = {}
    for block in blocks:
        exposed: set = set()
        killed: set = set()
        for ins in reversed(block.instructions):
            reads, kills = accesses(ins)
            exposed = (exposed - kills) | reads
            killed |= kills
        local[block] = (exposed, killed)
    # Starting from the upward-exposed reads, below the least fixpoint, converges to it.
    live_in = {block: set(local[block][0]) for block in blocks}
    out_of: dict[Block, set] = {block: set() for block in blocks}
    changed = True
    while changed:
        changed = False
        for block in reversed(blocks):
            out = set().union(*(live_in.get(s, set()) for s in successors(block)))
            out_of[block] = out
            new_in = local[block][0] | (out - local[block][1])
            if new_in != live_in[block]:
                live_in[block] = new_in
                changed = True
    return out_of


def live_after(live_out_of_block: set, block: Block, index: int, accesses: Accesses) -> set:
    """The units live just after instruction `index` of `block`, given those live out of it."""
    live = set(live_out_of_block)
    for ins in reversed(block.instructions[index + 1 :]):
        reads, kills = accesses(ins)
        live = (live - kills) | reads
    return live
