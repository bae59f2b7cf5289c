"""Out of SSA: an exec-level function into virtual registers (level `vreg`).

Every SSA value becomes its own virtual register. Phis go out the conventional-SSA way
(Sreedhar et al.'s method I): each phi `a0 = phi [a1, P1], ..., [an, Pn]` gets a fresh
virtual register `t`; at the logical end of each predecessor Pi (before its trailing
control flow: exec-mask rows other than a leading `else_*cmp`, wave branches and `stop`,
as Mesa's `agx_after_block_logical`) one `parallel_copy` writes the `t`s of every phi of
the block from that edge's sources, and at the start of the block (after a leading
`else_*cmp`) one `parallel_copy` moves the `t`s into the phi destinations. So:

* the phis of a block act in parallel (the swap problem): both copies are parallel;
* nothing live across a predecessor's copy is clobbered (the lost-copy problem): the copy
  writes only a fresh `t`, read nowhere but at the start of the phi's block.

A logical edge that is still critical (a predecessor with two logical successors into a
block with several predecessors and phis) is split by a fresh block where the exec-mask
layout allows it: the edge to the first successor when that successor comes right after
the predecessor (the fresh block between them runs for exactly the lanes that take the
edge). Any other critical edge keeps its copy at the predecessor's end, which the fresh
`t`s make harmless: the lanes that leave by the other edge write a `t` that nothing on
their path reads. `lower-cf` itself leaves no critical edge. Each split is counted as an
`edge-split` (`agxir.machine.paths`).
"""

from __future__ import annotations

from agxir.ir import EXEC, Block, Function, Instruction, Operand, Value, VirtualRegister
from agxir.machine.opcodes import EXEC_UPDATES, WAVE_BRANCHES, opcodes_for_level
from agxir.machine.paths import reached
from agxir.passes.pass_ import Pass

PARALLEL_COPY = opcodes_for_level("vreg")["parallel_copy"]
_ELSE = frozenset({"else_icmp", "else_fcmp"})
AFTER_LOGICAL_END = (frozenset(EXEC_UPDATES) - _ELSE) | WAVE_BRANCHES | {"stop"}


def logical_end(block: Block) -> int:
    """Where a copy on the block's outgoing edges goes: before its trailing control."""
    index = len(block.instructions)
    while index > 0 and block.instructions[index - 1].name in AFTER_LOGICAL_END:
        index -= 1
    return index


def logical_start(block: Block) -> int:
    """Where a copy on the block's incoming edges goes: after its leading else_*cmp."""
    index = 0
    while index < len(block.instructions) and block.instructions[index].name in _ELSE:
        index += 1
    return index


def _copy(dests: list, srcs: list[Operand]) -> Instruction:
    return Instruction(PARALLEL_COPY, None, srcs, {}, [], False, dests)


def split_critical_edges(fn: Function) -> int:
    """Split the critical logical edges into blocks with phis that the layout allows (see
    the module docstring); how many were split."""
    preds: dict[Block, int] = {b: 0 for b in fn.blocks}
    for block in fn.blocks:
        for succ in block.successors:
            preds[succ] += 1
    taken = {b.name for b in fn.blocks}
    split = 0
    for block in list(fn.blocks):
        succs = block.successors
        if len(succs) < 2:
            continue
        first = succs[0]
        position = fn.blocks.index(block)
        follows = position + 1 < len(fn.blocks) and fn.blocks[position + 1] is first
        if preds[first] < 2 or not follows or not any(True for _ in first.phis()):
            continue
        number = 1
        while f"split{number}" in taken:
            number += 1
        taken.add(f"split{number}")
        middle = Block(f"split{number}", [], [first])
        block.logical_successors = [middle] + succs[1:]
        for phi in first.phis():
            phi.blocks = [middle if b is block else b for b in phi.blocks]
        fn.blocks.insert(position + 1, middle)
        split += 1
    return split


def out_of_ssa(fn: Function) -> bool:
    if fn.level != EXEC:
        raise ValueError(f"out-of-ssa takes an exec-level function, not {fn.level}")
    reached("edge-split", split_critical_edges(fn))
    vregs: dict[Value, VirtualRegister] = {}
    for value in fn.values():
        vregs[value] = VirtualRegister(len(vregs) + 1, value.size)
    next_index = len(vregs) + 1

    def operand(src: Operand) -> Operand:
        return src.with_ref(vregs[src.ref]) if isinstance(src.ref, Value) else src

    outgoing: dict[Block, list[tuple[VirtualRegister, Operand]]] = {}
    for block in fn.blocks:
        phis = list(block.phis())
        body = block.instructions[len(phis):]
        for ins in body:
            ins.srcs = [operand(src) for src in ins.srcs]
            if isinstance(ins.dest, Value):
                ins.dest = vregs[ins.dest]
        if not phis:
            continue
        temps = []
        for phi in phis:
            temp = VirtualRegister(next_index, phi.dest.size)
            next_index += 1
            temps.append(temp)
            for src, pred in zip(phi.srcs, phi.blocks, strict=True):
                outgoing.setdefault(pred, []).append((temp, operand(src)))
        start = logical_start(Block(block.name, body))
        entry_copy = _copy([vregs[phi.dest] for phi in phis], [Operand(t) for t in temps])
        block.instructions = body[:start] + [entry_copy] + body[start:]
    for pred, pairs in outgoing.items():
        copy = _copy([dest for dest, _ in pairs], [src for _, src in pairs])
        pred.instructions.insert(logical_end(pred), copy)
    fn.level = "vreg"
    return True


PASS = Pass("out-of-ssa", "phis into parallel copies, values into virtual registers (exec to vreg)", out_of_ssa)
