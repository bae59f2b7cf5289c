"""Wrong address-mode passes for the bug zoo: the historic mistakes seed 001 describes, each
a small rule table in the same framework as the right passes (agxir/passes/address_*.py).

Each variant runs the whole address pipeline (cleanup, fuse, fold, lower, dce) with its
wrong rules tried before the right table of the pass they belong to, so a program reaches
them in the shape the real pipeline would give it. `oracles.smt.rules.prove_rule` refutes
every one of them with a counterexample the interpreter confirms
(tests/fuzz/test_address_variants.py), and the harness catches each on address-heavy
generated programs.

1. `old-shift-model` (Mesa <= 24.0 `match_address`, "a faulty model of the hardware"): it
   folds `base + ext64(index << s)` into `lea(base, index, s)`, as if the hardware shifted
   in 32 bits before extending. The 32-bit shift wraps (index = 0x80000000, s = 1 gives 0)
   while the lea's 64-bit one does not.
2. `fold-below-format-shift`: folds a lea whose shift is below the format's (s < fs) as
   shift 0. The access always scales the index by the element size, so the address is
   index << fs, not index << s (a byte-indexed lea into an i32 load).
3. `ilea-zero-extended`: folds an `ilea` with `.abs` on the index, so a negative index
   (-1 from the middle of an array) becomes 0xffffffff elements past the base.
4. `plain-iadd-promoted`: promotes a plain 32-bit `iadd` under u2u64/i2i64 into two 64-bit
   leas, `a + ext64(x + y)` -> `lea(lea(a, x, 0), y, 0)`. That is exact for `aadd`, whose
   sum cannot exceed INT32_MAX (the test proves the aadd rule), but a plain iadd wraps:
   `e + 0x80000000 + 0x80000000` is e in 32 bits and e + 2^32 in 64.

Each variant is a module-level callable `fn -> bool` (so `agxfuzz run --pass
fuzz.zoo.address_variants:old_shift_model` loads it), a `make_*` returning its
`PassUnderTest`, and an entry of `VARIANTS` for `fuzz.zoo.runner`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes import address_cleanup, address_fold, address_fuse, address_lower, dce
from agxir.passes.address_fold import access, format_shift, rewritten
from agxir.passes.address_fuse import extended, lea_for_extension, rules_for
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, apply_rules, defined_by, imm, reg, zero
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.address_variants"

# --- 1. the old hardware model: a 32-bit shift before the extension -----------------------------


def _old_shift(s: int) -> tuple[Rule, ...]:
    b = reg("b", size=32)
    shifts = (
        ("bfi", Ins("bfi", (zero(), b, imm(bits=s)), {"mask": 0}, size=32)),
        ("bfi-mask", Ins("bfi", (zero(), b, imm(bits=s)), {"mask": 32 - s}, size=32)),
        ("iadd", Ins("iadd", (zero(), b), {"shift": s}, size=32)),
        ("imul", Ins("imul", (b, imm(bits=1 << s)), size=32)),
        ("imul-swapped", Ins("imul", (imm(bits=1 << s), b), size=32)),
    )
    found: tuple[Rule, ...] = ()
    for name, shift in shifts:
        found += rules_for(
            f"old-shift-{name}-{s}",
            extended(defined_by(shift)),
            (Emit(lea_for_extension, (Use("a", abs=False, neg=False), Use("b")), {"shift": s}),),
            why=f"WRONG: ext64(b << {s}) taken for ext64(b) << {s}; the 32-bit shift wraps",
        )
    return found


OLD_SHIFT_RULES = tuple(rule for s in range(1, 5) for rule in _old_shift(s))

# --- 2. a lea folded below the format shift ------------------------------------------------------


def _below_range(b) -> bool:
    return b["s"] < format_shift(b)


def _fold_below(kind: str) -> Rule:
    lea = Ins(("ulea", "ilea"), (reg("b"), reg("o")), {"shift": Bind("s")}, op="lea")
    return Rule(
        f"lea-below-{kind}",
        access(kind, defined_by(lea)),
        rewritten(kind, Use("b"), Use("o", abs=lambda b: b["lea"] == "ulea", neg=False), 0),
        _below_range,
        why="WRONG: the access scales by the element size, the lea by less",
    )


FOLD_BELOW_RULES = tuple(_fold_below(kind) for kind in address_fold.ACCESSES)

# --- 3. an ilea folded with a zero-extended index --------------------------------------------------


def _fold_ilea_abs(kind: str) -> Rule:
    lea = Ins("ilea", (reg("b"), reg("o")), {"shift": Bind("s")}, op="lea")
    return Rule(
        f"ilea-abs-{kind}",
        access(kind, defined_by(lea)),
        rewritten(kind, Use("b"), Use("o", abs=True, neg=False), address_fold.lea_access_shift),
        address_fold.lea_in_range,
        why="WRONG: .abs zero-extends the index the ilea sign-extended",
    )


ILEA_ABS_RULES = tuple(_fold_ilea_abs(kind) for kind in address_fold.ACCESSES)

# --- 4. a plain iadd promoted as if it were aadd ---------------------------------------------------


def promoted_sum(add: str, why: str) -> tuple[Rule, ...]:
    """`a + ext64(add(x, y))` -> `lea(lea(a, x, 0), y, 0)` for the 32-bit `add` given: right
    for aadd (no overflow by contract), wrong for iadd."""
    x, y = reg("x", size=32, abs=False, neg=False), reg("y", size=32, abs=False, neg=False)
    attrs = {"shift": 0} if add == "iadd" else {}
    return rules_for(
        f"promote-{add}",
        extended(defined_by(Ins(add, (x, y), attrs, size=32))),
        (
            Emit(lea_for_extension, (Use("a", abs=False, neg=False), Use("x")), {"shift": 0},
                 size=64, name="partial"),
            Emit(lea_for_extension, (Use("partial"), Use("y")), {"shift": 0}),
        ),
        why=why,
    )


PLAIN_IADD_RULES = promoted_sum("iadd", "WRONG: a plain iadd wraps in 32 bits; the 64-bit leas do not")
# The right rule the variant is one opcode away from (not in address-fuse: it does not make
# better code, but the tests prove it, to show the opcode is the whole difference).
AADD_PROMOTION_RULES = promoted_sum(
    "aadd", "aadd never exceeds INT32_MAX, so ext64(x + y) = ext64(x) + ext64(y)"
)

# --- pipelines ------------------------------------------------------------------------------------


def _pipeline(fn: Function, fuse_rules=(), fold_rules=()) -> bool:
    changed = address_cleanup.PASS.run(fn)
    changed |= apply_rules(fn, tuple(fuse_rules) + address_fuse.RULES)
    changed |= apply_rules(fn, tuple(fold_rules) + address_fold.RULES)
    changed |= address_lower.PASS.run(fn)
    changed |= dce.PASS.run(fn)
    return changed


def old_shift_model(fn: Function) -> bool:
    return _pipeline(fn, fuse_rules=OLD_SHIFT_RULES)


def fold_below_format_shift(fn: Function) -> bool:
    return _pipeline(fn, fold_rules=FOLD_BELOW_RULES)


def ilea_zero_extended(fn: Function) -> bool:
    return _pipeline(fn, fold_rules=ILEA_ABS_RULES)


def plain_iadd_promoted(fn: Function) -> bool:
    return _pipeline(fn, fuse_rules=PLAIN_IADD_RULES)


def right_pipeline(fn: Function) -> bool:
    """The right passes in the same driver, for comparison."""
    return _pipeline(fn)


WRONG_RULES = {
    "old-shift-model": OLD_SHIFT_RULES,
    "fold-below-format-shift": FOLD_BELOW_RULES,
    "ilea-zero-extended": ILEA_ABS_RULES,
    "plain-iadd-promoted": PLAIN_IADD_RULES,
}
RUNS = {
    "old-shift-model": old_shift_model,
    "fold-below-format-shift": fold_below_format_shift,
    "ilea-zero-extended": ilea_zero_extended,
    "plain-iadd-promoted": plain_iadd_promoted,
}


def make_pass(name: str) -> PassUnderTest:
    """The variant `name` as a pass under test (replayable with --pass)."""
    run = RUNS[name]
    return PassUnderTest(name, run, ("--pass", f"{MODULE}:{run.__name__}"))


def make_old_shift_model() -> PassUnderTest:
    return make_pass("old-shift-model")


def make_fold_below_format_shift() -> PassUnderTest:
    return make_pass("fold-below-format-shift")


def make_ilea_zero_extended() -> PassUnderTest:
    return make_pass("ilea-zero-extended")


def make_plain_iadd_promoted() -> PassUnderTest:
    return make_pass("plain-iadd-promoted")


ORIGIN = "seed 001 (Mesa MR: rewrite AGX address mode handling)"
VARIANTS = (
    Variant("old-shift-model", ORIGIN + "; the old match_address",
            "fold base + ext64(index << s) as if the shift were after the extension",
            make_old_shift_model, address_heavy=True, of="address-fuse"),
    Variant("fold-below-format-shift", ORIGIN,
            "fold a lea whose shift is below the format shift into a load/store",
            make_fold_below_format_shift, address_heavy=True, of="address-fold"),
    Variant("ilea-zero-extended", ORIGIN + "; commit 850380cb (negative soa offsets)",
            "fold an ilea with .abs (zero-extended) on the index",
            make_ilea_zero_extended, address_heavy=True, of="address-fold"),
    Variant("plain-iadd-promoted", ORIGIN,
            "promote a plain 32-bit iadd to 64 bits where only aadd may be",
            make_plain_iadd_promoted, address_heavy=True, of="address-fuse"),
)
