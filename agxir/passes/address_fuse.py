"""Address fusion (Mesa `fuse_lea`, design notes section 7 step 2), as a rule table.

AGX loads and stores add `ext64(index32) << shift` to a 64-bit base, the shift done in 64
bits after extension (seed 001). This pass turns 64-bit address adds into the pseudo-ops
that say exactly that, `ulea(a, b, s) = a + (zext64(b) << s)` and `ilea` (sign-extending),
so `address-fold` can move them into the access one level deep. Every root is a 64-bit
`iadd`; the base `a` is a 64-bit register.

Relaxed GL/VK rules, s = 4 down to 1 (the largest shift first, as Mesa). They promote 32-bit
math to 64 bits, which is exact ONLY because `amul`/`aadd` are undefined when their exact
unsigned result exceeds INT32_MAX: a defined program computes the same number in 32 and in
64 bits, and that number is below 2^31, so zero- and sign-extension agree (u2u64 and i2i64
are both accepted). A plain `iadd`/`imul` may wrap and is never promoted.

* `relaxed-amul-pow2-s`: `a + ext64(amul(b, #2^s))` -> `ulea(a, b, s)`.
* `relaxed-amul-s`: `a + ext64(amul(b, #c))`, 2^s | c -> `ulea(a, amul(b, #c >> s), s)`.
* `relaxed-aadd-s`: `a + ext64(aadd(amul(c, #d), #f))`, 2^s | d and 2^s | f ->
  `ulea(a, aadd(amul(c, #d >> s), #f >> s), s)` (a field at offset f of a struct of stride d).

Strict rules: the shift is already a 64-bit one, after the extension, so nothing can wrap
and no promise is needed.

* `strict-bfi-s` (s = 1..4): `a + bfi64(#0, ext64(b), #s)` (mask 0 or 64 - s) -> `lea(a, b, s)`.
* `strict-imul-s` (s = 0..4): `a + imul64(ext64(b), #2^s)` -> `lea(a, b, s)`.
* `extend` (lowest priority, Mesa's `a + ext(b) -> lea(a, b, 0)`; here with the add's own
  shift t: `iadd a, ext64(b) shift=t` -> `lea(a, b, t)`), and `read-extended`: an add that
  extends a 32-bit operand itself (`iadd a, b.abs shift=t`, or without `.abs`: signed).

`lea` is `ulea` for `u2u64`/`.abs` and `ilea` for `i2i64`/no `.abs`. Adds are matched with
the base on either side (the add's shift then 0); `amul`/`aadd` only with the constant
second, the order `address-cleanup` puts them in.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
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

EXTENDS = ("u2u64", "i2i64")
LEA_FOR = {"u2u64": "ulea", "i2i64": "ilea"}
SHIFTS = (4, 3, 2, 1)  # relaxed rules: the largest shift first
BASE = reg("a", size=64, neg=False)


def lea_for_extension(b) -> str:
    return LEA_FOR[b["ext"]]


def lea_for_read(b) -> str:
    return "ulea" if b["b"].abs else "ilea"


def adds(offset: Opnd, shifted: bool = False) -> list[tuple[str, Ins]]:
    """`iadd64 a, offset` and `iadd64 offset, a` (the latter with shift 0): (suffix, pattern).
    `shifted`: the first form binds its shift to "t" (else it must be 0)."""
    shift = Bind("t") if shifted else 0
    return [
        ("", Ins("iadd", (BASE, offset), {"shift": shift}, size=64)),
        (".2", Ins("iadd", (offset, BASE), {"shift": 0}, size=64)),
    ]


def extended(inner: Opnd, name: str | None = None) -> Opnd:
    """A 64-bit value that is u2u64/i2i64 of `inner` (the opcode bound to "ext")."""
    return defined_by(Ins(EXTENDS, (inner,), size=64, op="ext"), name)


def rules_for(name: str, offset: Opnd, replacement, precondition=None, why="", shifted=False):
    return tuple(
        Rule(name + suffix, pattern, replacement, precondition, why)
        for suffix, pattern in adds(offset, shifted)
    )


def _low_bits_clear(names: tuple[str, ...], s: int):
    def clear(b):
        m = b.m
        low = m.const((1 << s) - 1, 16)
        zero16 = m.const(0, 16)
        checks = [m.eq(m.and_(b.imm(n), low, 16), zero16, 16) for n in names]
        result = checks[0]
        for check in checks[1:]:
            result = m.both(result, check)
        return result

    return clear


def _shifted_down(name: str, s: int):
    def down(b):
        return b.m.lshr(b.imm(name), s, 16)

    return down


def _add_shift(b) -> int:
    """The add's own shift (the swapped form has none)."""
    return b.get("t", 0)


def _base():
    """The base as a lea reads it: `.abs` on a 64-bit add operand changes nothing, and the
    lea's ADDR source takes no modifiers."""
    return Use("a", abs=False, neg=False)


# --- relaxed GL/VK rules ---------------------------------------------------------------------------

NO_OVERFLOW = "amul/aadd never overflow (undefined beyond INT32_MAX), so the 32-bit value is"


def relaxed(s: int) -> tuple[Rule, ...]:
    pow2 = rules_for(
        f"relaxed-amul-pow2-{s}",
        extended(defined_by(Ins("amul", (reg("b", size=32), imm(bits=1 << s))))),
        (Emit("ulea", (_base(), Use("b", abs=False)), {"shift": s}),),
        why=f"{NO_OVERFLOW} b * 2^{s} < 2^31 exactly: zext64(b) << {s}",
    )
    scaled = rules_for(
        f"relaxed-amul-{s}",
        extended(defined_by(Ins("amul", (any_("b"), imm("c"))))),
        (
            Emit("amul", (Use("b"), NewImm(_shifted_down("c", s))), size=32, name="index"),
            Emit("ulea", (_base(), Use("index")), {"shift": s}),
        ),
        _low_bits_clear(("c",), s),
        why=f"{NO_OVERFLOW} b * c < 2^31 exactly, and b * (c >> {s}) << {s} is that number",
    )
    field = rules_for(
        f"relaxed-aadd-{s}",
        extended(defined_by(Ins("aadd", (defined_by(Ins("amul", (any_("c"), imm("d")))), imm("f"))))),
        (
            Emit("amul", (Use("c"), NewImm(_shifted_down("d", s))), size=32, name="scaled"),
            Emit("aadd", (Use("scaled"), NewImm(_shifted_down("f", s))), size=32, name="index"),
            Emit("ulea", (_base(), Use("index")), {"shift": s}),
        ),
        _low_bits_clear(("d", "f"), s),
        why=f"{NO_OVERFLOW} c * d + f < 2^31 exactly; both parts divide by 2^{s}",
    )
    return pow2 + scaled + field


RELAXED = tuple(rule for s in SHIFTS for rule in relaxed(s))

# --- strict rules: the shift is a 64-bit one ----------------------------------------------------------

B32 = reg("b", size=32)


def strict_bfi(s: int) -> tuple[Rule, ...]:
    found = ()
    for mask in (0, 64 - s):
        shifted = defined_by(Ins("bfi", (zero(), extended(B32), imm(bits=s)), {"mask": mask}, size=64))
        found += rules_for(
            f"strict-bfi-{s}" + ("-mask" if mask else ""),
            shifted,
            (Emit(lea_for_extension, (_base(), Use("b")), {"shift": s}),),
            why=f"bfi64 #0, ext64(b), #{s} is ext64(b) << {s} in 64 bits: no wrap to promise away",
        )
    return found


def strict_imul(s: int) -> tuple[Rule, ...]:
    found = ()
    for suffix, srcs in (("", (extended(B32), imm(bits=1 << s))),
                         ("-swapped", (imm(bits=1 << s), extended(B32)))):
        found += rules_for(
            f"strict-imul-{s}{suffix}",
            defined_by(Ins("imul", srcs, size=64)),
            (Emit(lea_for_extension, (_base(), Use("b")), {"shift": s}),),
            why=f"imul64 ext64(b), #{1 << s} is ext64(b) << {s} in 64 bits",
        )
    return found


STRICT = tuple(r for s in range(1, 5) for r in strict_bfi(s)) + tuple(
    r for s in range(5) for r in strict_imul(s)
)

# --- lowest priority: any extension ----------------------------------------------------------------

EXTEND = rules_for(
    "extend",
    extended(B32),
    (Emit(lea_for_extension, (_base(), Use("b")), {"shift": _add_shift}),),
    why="iadd a, ext64(b) shift=t is a + (ext64(b) << t): the lea's definition",
    shifted=True,
) + rules_for(
    "read-extended",
    Opnd("b", kinds=frozenset({"value", "uniform"}), size=32, neg=False),
    (Emit(lea_for_read, (_base(), Use("b", abs=False)), {"shift": _add_shift}),),
    why="a 64-bit iadd reads a 32-bit b sign-extended, zero-extended with .abs, then shifts",
    shifted=True,
)

RULES: tuple[Rule, ...] = RELAXED + STRICT + EXTEND


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass(
    "address-fuse",
    "turn 64-bit address adds of extended (or relaxed 32-bit) indices into ulea/ilea",
    run,
)
