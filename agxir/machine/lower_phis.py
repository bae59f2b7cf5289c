"""Phi lowering: the register allocator's register phis become parallel copies.

Each phi `rD = phi [rS1, P1], [rS2, P2]` of a block becomes, at the end of each logical
predecessor P (before its trailing control flow: the exec-mask instructions other than a
leading `else_*cmp`, wave branches and `stop`; Mesa's `agx_after_block_logical`), one
`parallel_copy` holding every phi's move for that edge, so the phis of a block still act
in parallel; moves to themselves are left out. The control-flow lowering leaves no critical
edge (a predecessor of a block with phis has one logical successor), which is what makes
the copy run for exactly the lanes that take the edge; a critical edge is an error here.
"""

from __future__ import annotations

from agxir.ir import MACHINE, Block, Function, Instruction, Operand
from agxir.machine.opcodes import EXEC_UPDATES, WAVE_BRANCHES, opcodes_for_level
from agxir.passes.pass_ import Pass

PARALLEL_COPY = opcodes_for_level("machine")["parallel_copy"]
# else_*cmp leads its block (Mesa's agx_after_block_logical stops at it): an empty else
# `else_icmp; pop_exec` takes its copies between the two.
TRAILING = (frozenset(EXEC_UPDATES) - {"else_icmp", "else_fcmp"}) | WAVE_BRANCHES | {"stop"}


def trailing_start(block: Block) -> int:
    """Where the block's trailing control flow begins (its length if there is none)."""
    index = len(block.instructions)
    while index > 0 and block.instructions[index - 1].name in TRAILING:
        index -= 1
    return index


def insert_at_end(block: Block, copy: Instruction) -> None:
    block.instructions.insert(trailing_start(block), copy)


def lower_phis(fn: Function) -> bool:
    if fn.level != MACHINE:
        raise ValueError(f"lower-phis takes a machine-level function, not {fn.level}")
    moves: dict[Block, list[tuple[object, Operand]]] = {}
    changed = False
    for block in fn.blocks:
        phis = list(block.phis())
        if not phis:
            continue
        changed = True
        for phi in phis:
            for src, pred in zip(phi.srcs, phi.blocks, strict=True):
                if len(pred.successors) != 1:
                    raise ValueError(f"critical edge {pred.name} -> {block.name}")
                if src.ref != phi.dest:
                    moves.setdefault(pred, []).append((phi.dest, src))
        block.instructions = block.instructions[len(phis):]
    for pred, pairs in moves.items():
        copy = Instruction(PARALLEL_COPY, None, [src for _, src in pairs], {}, [],
                           False, [dest for dest, _ in pairs])
        insert_at_end(pred, copy)
    return changed


PASS = Pass("lower-phis", "register phis into parallel copies at the ends of predecessors", lower_phis)
