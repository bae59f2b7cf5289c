"""Backward fmov fusion (Mesa `agx_optimizer_fmov_rev`): an `fmov` (with or without `.sat`)
of a float op's result becomes that op, saturated if either was, when the fmov is the
result's only use (FmulFsatF2F16, FsatWithPhi), as a rule table.

    %t = fmul a, b          ; t's only use is the fmov
    %r = fmov.sat %t    ->  %r = fmul.sat a, b

Exact because every float result is already canonical (so a plain fmov is the identity on
it) and saturating twice is saturating once. The fmov must read %t without modifiers and
at %t's own width: `fmov.32` of a 16-bit result widens a value already rounded to f16,
which computing in f32 would not do (Mesa NoConversionsOn16BitALU, 3a0d1f83). The fused
op keeps the fmov's destination; the producer stays for `dce`.

The single-use guard counts phi sources as uses (FsatWithPhi: a phi on a back edge reads
the unsaturated value). The audit proves the rules without that guard, which only narrows
where they apply (fusing a value with other uses would compute it twice, still exactly).
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.passes.uses import single_use, use_counts
from agxir.rewrite import Emit, Ins, Rule, Use, any_, apply_rules, defined_by

ARITY = {"fadd": 2, "fmul": 2, "ffma": 3, "fmov": 1}
NAMES = ("a", "b", "c")


def saturated(b) -> bool:
    return b["inner"].sat or b["outer"].sat


def rules(precondition=None) -> tuple[Rule, ...]:
    table = []
    for op, arity in ARITY.items():
        inner = Ins(op, tuple(any_(n) for n in NAMES[:arity]), size="w", name="inner")
        table.append(Rule(
            op,
            Ins("fmov", (defined_by(inner, "t"),), size="w", sat=None, name="outer"),
            (Emit(op, tuple(Use(n) for n in NAMES[:arity]), sat=saturated),),
            precondition,
            why="a float result is canonical, and sat(sat(x)) = sat(x)",
        ))
    return tuple(table)


RULES = rules()


def run(fn: Function) -> bool:
    counts = use_counts(fn)
    # Rooted at the fmov, visited forward: in a chain fmov(fmov.sat(fmul)) the inner pair
    # fuses first and the outer fmov then fuses with its result, as Mesa's backward walk
    # (rooted at the producer) ends up.
    return apply_rules(fn, rules(single_use(counts, "t")))


PASS = Pass("fmov-rev", "fold an fmov (.sat) into the float op it copies when it is the "
            "only use (Mesa backward fmov_rev)", run)
