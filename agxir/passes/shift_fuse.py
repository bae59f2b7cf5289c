"""Shift fusion into iadd/imad (Mesa's NIR `imadshl_agx`/`imsubshl_agx` and the iadd shift,
as agx-notes section 6 describes them), as a rule table.

`ishl x, s` is `bfi #0, x, #s mask=0` in the model. An add or a multiply-add whose last
source is such a shift, read at the shift's own width, takes the shift into its `shift`
field (0..4), keeping a `.neg` on that source (a subtract: isub, imsub):

    iadd a, (bfi #0, b, #s)[.neg]       ->  iadd a, b[.neg] shift=s
    imad a, b, (bfi #0, c, #s)[.neg]    ->  imad a, b, c[.neg] shift=s

Both compute (b << s) at the destination's width before adding, so the fused form is the
same bits. One rule per opcode and s = 1..4 (the immediate is part of the pattern). The
shift stays for `dce`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.rewrite import Emit, Ins, Rule, Use, any_, apply_rules, defined_by, imm, zero

SHIFTS = range(1, 5)


def shift_pattern(s: int) -> Ins:
    return Ins("bfi", (zero(), any_("x"), imm(bits=s)), {"mask": 0}, size="w", name="shift")


def _rules(s: int) -> tuple[Rule, ...]:
    shifted = defined_by(shift_pattern(s), "t", neg=None)
    neg = lambda b: b["t"].neg  # noqa: E731
    return (
        Rule(f"iadd-{s}", Ins("iadd", (any_("a"), shifted), {"shift": 0}, size="w"),
             (Emit("iadd", (Use("a"), Use("x", neg=neg)), {"shift": s}),),
             why=f"iadd shifts its second source left by {s} at its own width, as the bfi did"),
        Rule(f"imad-{s}", Ins("imad", (any_("a"), any_("b"), shifted), {"shift": 0}, size="w"),
             (Emit("imad", (Use("a"), Use("b"), Use("x", neg=neg)), {"shift": s}),),
             why=f"imad shifts its addend left by {s} at its own width, as the bfi did"),
    )


RULES = tuple(rule for s in SHIFTS for rule in _rules(s))


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass("shift-fuse", "take a left shift of an iadd/imad addend into the shift field "
            "(Mesa imadshl/imsubshl)", run)
