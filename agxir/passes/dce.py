"""Dead code elimination: mark and sweep from the instructions that must stay.

Mesa's `agx_dce` walks backward with liveness; a mark-and-sweep over SSA def-use edges
removes the same instructions in straight-line code and, unlike a liveness walk, also
removes dead phi cycles (a loop-carried value nobody reads outside the cycle).

Roots are the instructions with side effects (`row.side_effect`: stores and exports) and
terminators. Everything else is kept only if a kept instruction transitively uses its
destination. That includes loads, `get_sr`, and `amul`/`aadd`: deleting an unused one may
remove undefined behaviour (an out-of-bounds load, an overflowing amul), which is allowed
because a program with fewer undefined executions refines the original.

DCE is a plain algorithm, not a rule table: what it removes depends on every use in the
function (a reachability question), not on a pattern around one instruction, so there is
no local rewrite for `agxir.rewrite` to state or for the audit to prove.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agxir.ir import Function, Instruction, Value
from agxir.passes.pass_ import Pass, definitions


def is_root(ins: Instruction) -> bool:
    return ins.opcode.side_effect or ins.is_terminator


def mark_and_sweep(
    fn: Function,
    roots: Callable[[Instruction], bool] = is_root,
    needs: Callable[[Instruction], Iterable[Value]] = Instruction.uses,
) -> bool:
    """Keep the `roots` and, transitively, the definitions of what kept instructions
    `need`; remove the rest. (The zoo's wrong DCEs change one of the two.)"""
    defs = definitions(fn)
    worklist = [ins for ins in fn.instructions() if roots(ins)]
    live = set(worklist)
    while worklist:
        ins = worklist.pop()
        for value in needs(ins):
            definition = defs.get(value)
            if definition is not None and definition not in live:
                live.add(definition)
                worklist.append(definition)
    if all(ins in live for ins in fn.instructions()):
        return False
    for block in fn.blocks:
        block.instructions[:] = [ins for ins in block.instructions if ins in live]
    return True


def run(fn: Function) -> bool:
    return mark_and_sweep(fn)


PASS = Pass("dce", "remove instructions whose results are never needed (mark and sweep)", run)
