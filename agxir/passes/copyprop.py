"""Copy propagation through `mov` (Mesa `agx_optimizer_forward`, step 1 "copyprop").

A `mov` is `bitop x, #0 tt=0xa`; it computes `%d = ext(x)` at the destination's width W:
x itself when x is W bits wide, else x sign-extended, or zero-extended when x carries
`.abs`. Each operand that reads `%d` is rewritten to read x instead when:

(a) x has the same size as `%d`. The bits are identical, so the use keeps its own
    modifiers (x's `.abs`, a no-op at equal size, is dropped). This holds for every operand
    kind, phi sources and ADDR/RAW/FLOAT operands included, provided the operand's Src spec
    accepts a uniform when x is one.
(b) x is narrower and the mov carries `.abs` (`%d = zext(x)`), and the operand is an INT
    source whose spec allows `.abs`, lists x's size and still meets its width rule. The
    new operand is `x.abs` with the use's `.neg`. Why this is exact: an INT source is read
    by extending to the working width, and the top bit of zext(x) is 0, so sign- and
    zero-extending `%d` both equal zero-extending x.

Anything else is left alone: immediates are never copied (Mesa: inline_imm owns them),
a narrow x never goes into FLOAT or RAW operands or phis (they would read x's own width),
and a sign-extending mov of a narrow x is kept (a use carrying `.abs` would zero-extend
it instead; Mesa, too, copies only zero-extensions). Integer compare sources take no modifiers
in our table, so (b) never fires into icmp/icmpsel/if_icmp, where Mesa allows it for
unsigned conditions.

The movs themselves stay; `dce` removes them once unused. Rewriting repeats until nothing
changes, so chains `mov(mov(x))` collapse onto x.
"""

from __future__ import annotations

from agxir.ir import Function, Instruction, Operand, Uniform, Value
from agxir.opcodes.spec import AT_MOST_DEST, INT, SAME_AS_DEST, Src
from agxir.passes.pass_ import ZERO, Pass


def is_mov(ins: Instruction) -> bool:
    return (
        ins.name == "bitop"
        and ins.attrs.get("tt") == 0xA
        and ins.dest is not None
        and len(ins.srcs) == 2
        and ins.srcs[1] == ZERO
    )


def _width_ok(spec: Src, size: int, use: Instruction) -> bool:
    dest = use.dest
    if dest is None or spec.width_rule is None:
        return True
    if spec.width_rule == SAME_AS_DEST:
        return size == dest.size
    if spec.width_rule == AT_MOST_DEST:
        return size <= dest.size
    return True


def replacement(use: Instruction, position: int, mov: Instruction) -> Operand | None:
    """The operand that can stand for `use.srcs[position]` (which reads `mov.dest`), or None."""
    operand = use.srcs[position]
    x = mov.srcs[0]
    dest = mov.dest
    # `x is dest` only happens in unreachable code, where the verifier does not require
    # dominance and a mov may read itself; propagating it would loop forever.
    if not isinstance(x.ref, (Value, Uniform)) or x.ref is dest or x.neg:
        return None
    if use.is_phi:
        spec = None
    elif position < len(use.opcode.srcs):
        spec = use.opcode.srcs[position]
    else:
        return None
    if spec is not None and isinstance(x.ref, Uniform) and not spec.uniform:
        return None

    if x.size == dest.size:
        return Operand(x.ref, operand.abs, operand.neg)
    if (
        x.size < dest.size
        and x.abs
        and spec is not None
        and spec.kind == INT
        and spec.allows("abs")
        and x.size in spec.sizes
        and _width_ok(spec, x.size, use)
    ):
        return Operand(x.ref, abs=True, neg=operand.neg)
    return None


def run(fn: Function) -> bool:
    changed = False
    movs = {ins.dest: ins for ins in fn.instructions() if is_mov(ins)}
    # Each round collapses at least one more link of every chain, so chains need at most
    # len(movs) rounds; the bound only matters for mov cycles in unreachable code.
    for _ in range(len(movs) + 1):
        progress = False
        for ins in fn.instructions():
            for position, src in enumerate(ins.srcs):
                mov = movs.get(src.ref) if isinstance(src.ref, Value) else None
                if mov is None:
                    continue
                new = replacement(ins, position, mov)
                if new is not None and new != src:
                    ins.srcs[position] = new
                    progress = True
        if not progress:
            break
        changed = True
    return changed


PASS = Pass("copyprop", "read a mov's source instead of its result (Mesa forward copyprop)", run)
