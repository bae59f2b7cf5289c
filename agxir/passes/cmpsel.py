"""Compare/select fusion (Mesa `agx_optimizer_cmpsel`, mesa#7539) and two heuristic variants.

NIR has no fused compare-and-select, so `bcsel(a < b, x, y)` reaches the backend as

    %t = fcmp a, b cond=lt inv=I          ; t = (lt(a, b) XOR I) ? 1 : 0
    %r = icmpsel %t, #0, x, y cond=ueq    ; r = (t == 0) ? x : y

and the rewrite turns the select into `fcmpsel a, b, ..., cond=lt`. Since `t == 0` exactly
when `lt(a, b) XOR I` is false, `r = (lt XOR I) ? y : x`; `*cmpsel` has no invert bit, so
the payloads are swapped EXACTLY WHEN the compare is not inverted (I = 0):

    I = 0:  r = lt ? y : x   ->  fcmpsel a, b, y, x
    I = 1:  r = lt ? x : y   ->  fcmpsel a, b, x, y

(The historic bug swaps on the *select's* invert flag, which an icmpsel never sets.)

The compare stays: other instructions may read `%t`, and `dce` removes it when none do.
Each select is rewritten at most once per run, as in Mesa's single forward walk.

Three variants share the rewrite and differ only in when they fire (the blog post's
heuristics; "cmpsel" is what Mesa merged):
- `cmpsel` (heuristic 4): always.
- `cmpsel-uniform-compare` (heuristic 1): both compare sources are uniforms or immediates,
  so fusing adds no register pressure.
- `cmpsel-uniform-select` (heuristic 3): both payloads are uniforms or immediates, visited
  backward as the blog's backward-pass version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agxir.ir import Function, Instruction, Operand
from agxir.opcodes.table import OPCODES
from agxir.passes.pass_ import Pass, compared_value, definitions, instructions_backward

SELECT_FOR = {"icmp": "icmpsel", "fcmp": "fcmpsel"}

Heuristic = Callable[[Instruction, Instruction], bool]


def fusable(ins: Instruction, defs) -> Instruction | None:
    """The compare to fuse into `ins`, when `ins` is `icmpsel t, #0, x, y cond=ueq` on a compare."""
    if ins.name != "icmpsel" or len(ins.srcs) != 4:
        return None
    return compared_value(ins, defs)


def fuse(select: Instruction, compare: Instruction) -> None:
    """Rewrite `select` to compare `compare`'s sources directly."""
    x, y = select.srcs[2], select.srcs[3]
    if not compare.attrs["inv"]:
        x, y = y, x
    select.opcode = OPCODES[SELECT_FOR[compare.name]]
    select.srcs = [compare.srcs[0], compare.srcs[1], x, y]
    select.attrs = {"cond": compare.attrs["cond"]}


def _in_sgpr(operand: Operand) -> bool:
    return operand.is_uniform or operand.is_immediate


def always(select: Instruction, compare: Instruction) -> bool:
    return True


def uniform_compare(select: Instruction, compare: Instruction) -> bool:
    return all(_in_sgpr(src) for src in compare.srcs)


def uniform_select(select: Instruction, compare: Instruction) -> bool:
    return all(_in_sgpr(src) for src in select.srcs[2:4])


def fuse_where(
    fn: Function, heuristic: Heuristic, order: Callable[[Function], Iterable[Instruction]]
) -> bool:
    defs = definitions(fn)
    changed = False
    for ins in list(order(fn)):
        compare = fusable(ins, defs)
        if compare is not None and heuristic(ins, compare):
            fuse(ins, compare)
            changed = True
    return changed


def run(fn: Function) -> bool:
    return fuse_where(fn, always, Function.instructions)


def run_uniform_compare(fn: Function) -> bool:
    return fuse_where(fn, uniform_compare, Function.instructions)


def run_uniform_select(fn: Function) -> bool:
    return fuse_where(fn, uniform_select, instructions_backward)


PASS = Pass("cmpsel", "fuse icmp/fcmp into the icmpsel testing it (Mesa; heuristic 4)", run)
UNIFORM_COMPARE = Pass(
    "cmpsel-uniform-compare",
    "cmpsel fusion only when both compare sources are uniforms or immediates (heuristic 1)",
    run_uniform_compare,
)
UNIFORM_SELECT = Pass(
    "cmpsel-uniform-select",
    "cmpsel fusion only when both selected values are uniforms or immediates, "
    "visited backward (heuristic 3)",
    run_uniform_select,
)
