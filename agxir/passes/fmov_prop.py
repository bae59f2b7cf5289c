"""Float move propagation (Mesa `agx_optimizer_fmov`, forward pass step 2) and f16 -> f32
conversion folding into float sources, as a rule table.

`fmov x` (`fadd x, -0.0` on AGX) is a float copy that applies x's `.abs`/`.neg`. Each rule's
root is the instruction that USES `%t = fmov x` (no `.sat`), focused on the operand reading
`%t`; the operand becomes x with the modifiers composed:

    compose      use without .abs:  abs = x.abs,  neg = x.neg XOR use.neg   (neg of neg cancels)
    abs-absorbs  use with .abs:     abs = 1,      neg = use.neg             (abs absorbs neg)

Only FLOAT slots take the result: an fmov canonicalizes NaN and the use, being a float op or
a float compare, does too (or ignores the NaN's bits), so the copy disappears without a
trace. RAW slots (fcmpsel's payloads, phis, exports, stores) read bits, and an INT slot
reads an integer: neither may see x instead (Mesa c8e331bf propagated into fcmpsel's
payloads). The use's width rule must still hold for x: an `fmov.32` of a 16-bit x goes into
32-bit ops only (they read a 16-bit float source exactly), never into a 16-bit one.

`f2f-source` folds `%t = convert x mode=f2f` (f16 -> f32, exact) into a FLOAT slot of a
32-bit op, which reads the 16-bit x converting it the same way. The other direction (an
f32 -> f16 convert folded into a 16-bit op, or a 16-bit result widened) is not exact and
is not a rule (Mesa NoConversionsOn16BitALU, 3a0d1f83).

The fmovs and converts stay for `dce`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.opcodes.spec import AT_MOST_DEST, FLOAT, SAME_AS_DEST
from agxir.passes.pass_ import Pass, may_read_instead, use_neg
from agxir.rewrite import Ins, Rule, Use, any_, apply_rules, defined_by, reg, slot_spec

FMOV = Ins("fmov", (any_("x", size="w"),), size="w", sat=False, name="move")
WIDENING_FMOV = Ins("fmov", (any_("x", size=16),), size=32, sat=False, name="move")
F2F = Ins("convert", (reg("x", size=16, abs=False, neg=False),), {"mode": "f2f"}, size=32,
          name="move")


def float_slot(b) -> bool:
    """The focused slot reads a float, and may read x (size, width rule, uniform)."""
    if not may_read_instead(b, "x", "move"):
        return False
    spec, user, x = slot_spec(b.root, b.position), b.root, b["x"]
    if spec is None or spec.kind != FLOAT or x.size not in spec.sizes:
        return False
    if spec.width_rule == AT_MOST_DEST:
        return x.size <= user.dest.size
    if spec.width_rule == SAME_AS_DEST:
        return x.size == user.dest.size
    return True


def alu_float_slot(b) -> bool:
    """A float slot of an ALU op: it reads at the op's own width, whatever x's size (a
    compare reads at the wider of its two sources, so a narrower x would change that)."""
    spec = slot_spec(b.root, b.position)
    return float_slot(b) and spec.width_rule is not None


def composed_abs(b) -> bool:
    return b["x"].abs or b["use"].abs


def composed_neg(b) -> bool:
    """An outer .abs absorbs x's neg; otherwise the negations compose (neg of neg cancels)."""
    use = b["use"]
    return use.neg if use.abs else b["x"].neg != use.neg


def use_of(definition: Ins, use_abs: bool | None) -> Ins:
    return Ins(None, srcs=None, name="user",
               focus=defined_by(definition, "use", abs=use_abs, neg=None))


RULES = (
    Rule(
        "compose",
        use_of(FMOV, False),
        Use("x", neg=composed_neg),
        float_slot,
        why="use.neg(fmov(x)) reads x's abs with the two negations XORed",
    ),
    Rule(
        "abs-absorbs",
        use_of(FMOV, True),
        Use("x", abs=True, neg=use_neg),
        float_slot,
        why="|fmov(x)| = |x| whatever x's own modifiers",
    ),
    Rule(
        "widening",
        use_of(WIDENING_FMOV, None),
        Use("x", abs=composed_abs, neg=composed_neg),
        alu_float_slot,
        why="a 32-bit op reads a 16-bit float source by the exact conversion fmov.32 makes",
    ),
    Rule(
        "f2f-source",
        use_of(F2F, None),
        Use("x", abs=lambda b: b["use"].abs, neg=use_neg),
        alu_float_slot,
        why="a 32-bit float op reads a 16-bit source by the same exact conversion",
    ),
)


def run(fn: Function) -> bool:
    changed = False
    # Chains fmov(fmov(x)) collapse one link per walk.
    for _ in range(sum(1 for ins in fn.instructions() if ins.name in ("fmov", "convert")) + 1):
        if not apply_rules(fn, RULES):
            break
        changed = True
    return changed


PASS = Pass("fmov-prop", "read an fmov's (or f16->f32 convert's) source in float slots, "
            "composing abs/neg (Mesa forward fmov)", run)
