"""Integer copy propagation across extensions (Mesa forward step 9 and the zero-extension
copyprop: SourceZeroExtend, AddSourceSignExtend), as a rule table.

An INT source narrower than its op is read sign-extended, or zero-extended with `.abs`.
So an extension feeding an INT source can be skipped:

    sign-extension  %t = signext x   (or i2i64 x)  ->  the use reads x
    zero-extension  %t = u2u64 x                   ->  the use reads x.abs

when the slot lists x's size, allows `.abs` for the zero-extension, and still meets its
width rule. The use must read %t without `.abs`: at a width above %t's that would
zero-extend %t, not sign-extend x. Only INT slots: a float slot reading an integer value
converts nothing (IntCopypropDoesntConvert), and RAW slots read x's own width. Integer
compare slots take no modifiers in the model and are left alone. The extensions stay for
`dce`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.opcodes.spec import AT_MOST_DEST, INT, SAME_AS_DEST
from agxir.passes.pass_ import Pass, may_read_instead, use_neg
from agxir.rewrite import Ins, Rule, Use, apply_rules, defined_by, reg, slot_spec

SIGNEXT = Ins(("signext", "i2i64"), (reg("x", abs=False, neg=False),), name="extend")
ZEXT = Ins("u2u64", (reg("x", abs=False, neg=False),), name="extend")


def int_slot(b, modifier: str | None = None) -> bool:
    if not may_read_instead(b, "x", "extend"):
        return False
    spec, user, x = slot_spec(b.root, b.position), b.root, b["x"]
    if spec is None or spec.kind != INT or x.size not in spec.sizes or spec.width_rule is None:
        return False
    if modifier is not None and not spec.allows(modifier):
        return False
    if spec.width_rule == SAME_AS_DEST:
        return x.size == user.dest.size
    return spec.width_rule != AT_MOST_DEST or x.size <= user.dest.size


def _use_of(extension: Ins) -> Ins:
    return Ins(None, srcs=None, name="user", focus=defined_by(extension, "use", abs=False, neg=None))


RULES = (
    Rule("sign-extension", _use_of(SIGNEXT), Use("x", abs=False, neg=use_neg), int_slot,
         why="an INT source reads a narrower x sign-extended, as the extension did"),
    Rule("zero-extension", _use_of(ZEXT), Use("x", abs=True, neg=use_neg),
         lambda b: int_slot(b, "abs"),
         why="an INT source reads a narrower x.abs zero-extended, as u2u64 did"),
)


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass("ext-prop", "read the narrow value instead of its sign/zero extension in INT "
            "sources (Mesa signext and zext copyprop)", run)
