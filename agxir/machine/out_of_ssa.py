"""Out of SSA: an exec-level function into virtual registers (level `vreg`).

Every SSA value becomes its own virtual register (no coalescing, so no interference check
is needed and the lost-copy problem cannot arise); the phis of a block become, at the end
of each logical predecessor (before its trailing control flow), one `parallel_copy` into
the phi destinations' registers, so the phis still act in parallel (the swap problem).
The control-flow lowering leaves no critical edge; a predecessor with two logical
successors is an error here, not a silent mis-copy.
"""

from __future__ import annotations

from agxir.ir import Block, Function, Instruction, Operand, Value, VirtualRegister
from agxir.machine.lower_phis import PARALLEL_COPY, insert_at_end
from agxir.passes.pass_ import Pass


def out_of_ssa(fn: Function) -> bool:
    if fn.level != "exec":
        raise ValueError(f"out-of-ssa takes an exec-level function, not {fn.level}")
    vregs: dict[Value, VirtualRegister] = {}
    for value in fn.values():
        vregs[value] = VirtualRegister(len(vregs) + 1, value.size)

    def operand(src: Operand) -> Operand:
        return src.with_ref(vregs[src.ref]) if isinstance(src.ref, Value) else src

    copies: dict[Block, list[tuple[VirtualRegister, Operand]]] = {}
    for block in fn.blocks:
        phis = list(block.phis())
        for phi in phis:
            for src, pred in zip(phi.srcs, phi.blocks, strict=True):
                if len(pred.successors) != 1:
                    raise ValueError(f"critical edge {pred.name} -> {block.name}")
                copies.setdefault(pred, []).append((vregs[phi.dest], operand(src)))
        block.instructions = block.instructions[len(phis):]
        for ins in block.instructions:
            ins.srcs = [operand(src) for src in ins.srcs]
            if isinstance(ins.dest, Value):
                ins.dest = vregs[ins.dest]
    for pred, pairs in copies.items():
        insert_at_end(pred, Instruction(PARALLEL_COPY, None, [s for _, s in pairs], {}, [],
                                        False, [d for d, _ in pairs]))
    fn.level = "vreg"
    return True


PASS = Pass("out-of-ssa", "phis into parallel copies, values into virtual registers (exec to vreg)", out_of_ssa)
