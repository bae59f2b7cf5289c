"""Cleanup before address fusion (Mesa `cleanup_amul`, design notes section 7 step 1), as a
rule table.

NIR hands the backend relaxed address math: `amul`/`aadd` promise that their exact unsigned
result is at most INT32_MAX (otherwise the program is undefined), which is what later lets
`address-fuse` promote them to 64 bits. Mesa keeps `nir_opt_algebraic` away from these
opcodes so the promise survives, and so it cleans them up itself first; fusion then only
has to look one level deep:

* `amul-constant-second`, `aadd-constant-second`: `amul(#k, x)` -> `amul(x, #k)` (and aadd).
  The framework matches sources in the order written; NIR's matcher tries both orders of a
  commutative op. The constant goes second, the order the rules below and address-fuse's
  match. (The one non-address op matched, `imul`, is written in both orders.)
* `amul-chain-by-2^k`, `amul-chain-2^k-by`: `amul(amul(a, #b), #c)` -> `amul(a, #(b*c))`
  when b*c fits the 8-bit immediate. Exact: a defined source has a*b <= INT32_MAX exactly,
  so the two exact products are the same number, and a*b*c <= INT32_MAX makes the target
  defined too. One factor is a fixed power of two per rule (0..7 for c, 1..7 for b): z3
  proves (a*b)*2^k = a*(b*2^k) at once, but not associativity of three unknown factors, and
  the prover only proves what is in the table. Every chain the address generator makes has
  such a factor; odd-by-odd chains (amul(amul(a, #3), #5)) are left alone.
* `amul-of-*` (Mesa: `amul(ishl(u2u64 a, #b), #c) -> amul(u2u64 a, c << b)`): our amul is
  32-bit, so the shift is a 32-bit one, which wraps. With a 32-bit `a` the rule is WRONG
  (a = 0x80000000, s = 1: `a << 1` is 0 and `amul(0, #1)` is defined, `amul(a, #2)` is not);
  tests/agxir/passes/test_address_cleanup.py shows z3 refuting it. It is exact for a 16-bit
  `a` (register or immediate), which is what the rules match: the new immediate c << s
  must fit 8 bits, so s <= 7 and a non-negative `a` < 2^15 cannot wrap, while a negative one
  makes the shifted value >= 2^31 and the source amul undefined unless c = 0, where both
  sides are 0. The shift may be `bfi #0, a, #s mask=0` (s = 1..7, one rule each),
  `iadd #0, a shift=s` or `imul a, #2^s` (either order).
* `iadd-zero`, `zero-iadd`: a use of `iadd(a, #0)` (any shift) or `iadd(#0, a) shift=0` of
  a's own size reads a instead, keeping the use's modifiers; equal sizes make it a copy,
  not an extension (at a wider size `iadd a, #0` is signext).

The pass repeats its walk until nothing changes (a chain needs one walk per link, and a
root rewritten by `*-constant-second` is revisited on the next walk); `dce` removes what
became dead.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass, may_read_instead, use_abs, use_neg
from agxir.rewrite import (
    Bind,
    Emit,
    Ins,
    NewImm,
    Opnd,
    Rule,
    Use,
    any_,
    apply_rules,
    defined_by,
    imm,
    reg,
    zero,
)

IMM8_LIMIT = 256  # amul/imul/aadd immediates are 8-bit (agxir.verifier.IMMEDIATE_LIMITS)


# --- operand order ---------------------------------------------------------------------------


def _swapped(opcode: str) -> Rule:
    return Rule(
        f"{opcode}-constant-second",
        Ins(opcode, (imm("k"), reg("x"))),
        (Emit(opcode, (Use("x"), Use("k"))),),
        why=f"{opcode} is commutative; the constant second is the order the address rules match",
    )


CONSTANT_SECOND = (_swapped("amul"), _swapped("aadd"))

# --- amul chains ---------------------------------------------------------------------------------


def _product(b):
    """b * c in 16 bits: both are below 256, so the product cannot wrap."""
    return b.m.mul(b.imm("b"), b.imm("c"), 16)


def _product_fits(b):
    return b.m.ult(_product(b), b.m.const(IMM8_LIMIT, 16), 16)


def _chain(name: str, b: Opnd, c: Opnd) -> Rule:
    return Rule(
        name,
        Ins("amul", (defined_by(Ins("amul", (any_("a"), b)), "inner"), c)),
        (Emit("amul", (Use("a"), NewImm(_product))),),
        _product_fits,
        why="a defined source has a*b <= INT32_MAX exactly, so amul(a*b, c) = amul(a, b*c)",
    )


# One factor a fixed power of two per rule: see the module docstring.
AMUL_CHAIN = tuple(
    _chain(f"amul-chain-by-{1 << k}", imm("b"), imm("c", bits=1 << k)) for k in range(8)
) + tuple(
    _chain(f"amul-chain-{1 << k}-by", imm("b", bits=1 << k), imm("c")) for k in range(1, 8)
)

# --- amul of a 32-bit shift of a 16-bit value ------------------------------------------------------


def _scaled_by(shift: int):
    def scaled(b):
        return b.m.shl(b.imm("c"), shift, 16)

    return scaled


def _fits_after(shift: int):
    def fits(b):
        return b.m.ult(b.m.shl(b.imm("c"), shift, 16), b.m.const(IMM8_LIMIT, 16), 16)

    return fits


def _iadd_scaled(b):
    return b.m.shl(b.imm("c"), b["s"], 16)


def _iadd_fits(b):
    return b.m.ult(_iadd_scaled(b), b.m.const(IMM8_LIMIT, 16), 16)


A16 = any_("a", size=16)
WHY_SHIFT = (
    "16-bit a: a non-negative a << s cannot wrap below the 8-bit bound on c << s; a negative "
    "one makes the source amul undefined unless c = 0"
)


def _of_shift(name: str, shift_ins: Ins, scaled, fits) -> Rule:
    return Rule(
        name,
        Ins("amul", (defined_by(shift_ins), imm("c"))),
        (Emit("amul", (Use("a"), NewImm(scaled))),),
        fits,
        WHY_SHIFT,
    )


# The shift is fixed per rule for the same reason as the chains' powers of two.
AMUL_OF_SHIFT = (
    tuple(
        _of_shift(f"amul-of-bfi-shift-{s}",
                  Ins("bfi", (zero(), A16, imm(bits=s)), {"mask": 0}, size=32),
                  _scaled_by(s), _fits_after(s))
        for s in range(1, 8)
    )
    + (_of_shift("amul-of-iadd-shift",
                 Ins("iadd", (zero(), Opnd("a", size=16, neg=False)), {"shift": Bind("s")}, size=32),
                 _iadd_scaled, _iadd_fits),)
    + tuple(
        _of_shift(f"amul-of-imul-{1 << s}" + (".2" if swap else ""),
                  Ins("imul", (imm(bits=1 << s), A16) if swap else (A16, imm(bits=1 << s)), size=32),
                  _scaled_by(s), _fits_after(s))
        for s in range(1, 8)
        for swap in (False, True)
    )
)

# --- iadd(a, #0) ---------------------------------------------------------------------------------


def _copyable(b) -> bool:
    return may_read_instead(b, "a", "add")




def _use_of(add: Ins) -> Ins:
    return Ins(None, srcs=None, name="user", focus=defined_by(add, "use", abs=None, neg=None))


IADD_ZERO = (
    Rule(
        "iadd-zero",
        _use_of(Ins("iadd", (reg("a", neg=False, size="w"), zero()), name="add", size="w")),
        Use("a", abs=use_abs, neg=use_neg),
        _copyable,
        why="a + (0 << shift) at a's own width is a's bits: the use reads a with its modifiers",
    ),
    Rule(
        "zero-iadd",
        _use_of(Ins("iadd", (zero(), reg("a", neg=False, size="w")), {"shift": 0}, name="add", size="w")),
        Use("a", abs=use_abs, neg=use_neg),
        _copyable,
        why="0 + a at a's own width is a's bits: the use reads a with its modifiers",
    ),
)

RULES: tuple[Rule, ...] = CONSTANT_SECOND + AMUL_CHAIN + AMUL_OF_SHIFT + IADD_ZERO


def run(fn: Function) -> bool:
    changed = False
    # Each walk removes at least one link of every iadd-zero chain; the bound only matters
    # for add cycles in unreachable code.
    for _ in range(fn.instruction_count() + 1):
        if not apply_rules(fn, RULES):
            break
        changed = True
    return changed


PASS = Pass(
    "address-cleanup",
    "fold amul chains and amul of small shifts, read a instead of iadd(a, #0) (Mesa cleanup_amul)",
    run,
)
