"""Copy propagation through `mov` (Mesa `agx_optimizer_forward`, step 1 "copyprop"), as a
rule table.

A `mov` is `bitop x, #0 tt=0xa`; it computes `%d = ext(x)` at the destination's width W:
x itself when x is W bits wide, else x sign-extended, or zero-extended when x carries
`.abs`. Each rule's root is the instruction that USES `%d`, and its focus is the operand
reading `%d` (at any position), which is rewritten to read x instead when:

(a) `same-size`: x has the same size as `%d`. The bits are identical, so the use keeps its
    own modifiers (x's `.abs`, a no-op at equal size, is dropped). This holds for every
    operand kind, phi sources and ADDR/RAW/FLOAT operands included, provided the operand's
    Src spec accepts a uniform when x is one.
(b) `zero-extension`: x is narrower and the mov carries `.abs` (`%d = zext(x)`), and the
    operand is an INT source whose spec allows `.abs`, lists x's size and still meets its
    width rule. The new operand is `x.abs` with the use's `.neg`. Why this is exact: an INT
    source is read by extending to the working width, and the top bit of zext(x) is 0, so
    sign- and zero-extending `%d` both equal zero-extending x.

The conditions on the use site (its Src spec, its width rule, phi or not) are the rules'
preconditions over the bindings. Anything else is left alone: immediates are never copied
(Mesa: inline_imm owns them), a narrow x never goes into FLOAT or RAW operands or phis (they
would read x's own width), and a sign-extending mov of a narrow x is kept (a use carrying
`.abs` would zero-extend it instead; Mesa, too, copies only zero-extensions). Integer compare
sources take no modifiers in our table, so (b) never fires into icmp/icmpsel/if_icmp, where
Mesa allows it for unsigned conditions.

The movs themselves stay; `dce` removes them once unused. Walks repeat until nothing changes
(at most once more than there are movs), so chains `mov(mov(x))` collapse onto x.
"""

from __future__ import annotations

from agxir.ir import Function, Instruction
from agxir.opcodes.spec import AT_MOST_DEST, INT, SAME_AS_DEST, Src
from agxir.passes.pass_ import ZERO, Pass, may_read_instead, use_abs, use_neg
from agxir.rewrite import Ins, Rule, Use, apply_rules, defined_by, reg, slot_spec, zero

MOV = Ins("bitop", (reg("x", neg=False), zero()), {"tt": 0xA}, name="mov")


def is_mov(ins: Instruction) -> bool:
    return (
        ins.name == "bitop"
        and ins.attrs.get("tt") == 0xA
        and ins.dest is not None
        and len(ins.srcs) == 2
        and ins.srcs[1] == ZERO
    )


def width_ok(spec: Src, size: int, use: Instruction) -> bool:
    dest = use.dest
    if dest is None or spec.width_rule is None:
        return True
    if spec.width_rule == SAME_AS_DEST:
        return size == dest.size
    if spec.width_rule == AT_MOST_DEST:
        return size <= dest.size
    return True


def copyable(b) -> bool:
    return may_read_instead(b, "x", "mov")


def same_size(b) -> bool:
    return copyable(b) and b["x"].size == b["mov"].dest.size


def zero_extension(b) -> bool:
    x, user = b["x"], b.root
    if not copyable(b) or x.size >= b["mov"].dest.size:
        return False
    spec = slot_spec(user, b.position)
    return (
        spec is not None
        and spec.kind == INT
        and spec.allows("abs")
        and x.size in spec.sizes
        and width_ok(spec, x.size, user)
    )




def use_of_mov(x_abs: bool | None) -> Ins:
    """Any instruction (the use site), focused on an operand defined by a mov."""
    mov = MOV if x_abs is None else Ins(
        "bitop", (reg("x", neg=False, abs=x_abs), zero()), {"tt": 0xA}, name="mov"
    )
    return Ins(None, srcs=None, name="user", focus=defined_by(mov, "use", abs=None, neg=None))


RULES = (
    Rule(
        "same-size",
        use_of_mov(None),
        Use("x", abs=use_abs, neg=use_neg),
        same_size,
        why="an equal-size mov copies the bits, so the use reads x with its own modifiers",
    ),
    Rule(
        "zero-extension",
        use_of_mov(True),
        Use("x", abs=True, neg=use_neg),
        zero_extension,
        why="zext(x) has a clear top bit: extending it either way equals zero-extending x",
    ),
)


def run(fn: Function) -> bool:
    changed = False
    movs = sum(1 for ins in fn.instructions() if is_mov(ins))
    # Each walk collapses at least one more link of every chain, so chains need at most
    # `movs` walks; the bound only matters for mov cycles in unreachable code.
    for _ in range(movs + 1):
        if not apply_rules(fn, RULES):
            break
        changed = True
    return changed


PASS = Pass("copyprop", "read a mov's source instead of its result (Mesa forward copyprop)", run)
