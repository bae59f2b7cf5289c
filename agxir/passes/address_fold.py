"""Folding addresses into loads and stores (Mesa's intrinsic rewrite in
`agx_nir_lower_address.c`, design notes section 7 step 3), as a rule table.

A `device_load`/`device_store` reads `base64 + (ext64(index32) << (fs + shift))`, where
fs = log2 of the format's bytes (0, 1, 2 for i8, i16, i32), `shift` is 0..2, and the index
is sign-extended unless it carries `.abs`. An access whose address is computed and whose
index is `#0` (what isel emits) can take over one level of that computation:

* `lea`: the base is `ulea`/`ilea(b, o, s)` with fs <= s <= fs + 2. The access becomes
  base b, index o, shift s - fs; `.abs` on o exactly when the lea was `ulea` (zero-extend),
  none for `ilea` (sign-extend). A lea with s < fs is NOT folded: the access always shifts
  by at least fs. One with s > fs + 2 is left for `address-lower`.
* `offset-k`: the base is `iadd64(x, #K)` (either order, or `x, #K.neg` for x - K) and K is
  a multiple of 2^(fs + k), k = 2, 1, 0 (the largest first, Mesa's min(ctz K, max)). The
  access becomes base x, index #(K >> (fs + k)) (negated for `.neg`), shift k. The index
  is a 16-bit immediate read sign-extended; K < 256 so it always fits.

Both keep the address bit for bit, so alignment and bounds are the source's. The format,
the store's value and the load's destination are kept; the old access's shift is
irrelevant (its index was 0). The lea or add stays for `dce`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.opcodes.effects import FORMAT_SHIFT
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

ACCESSES = ("device_load", "device_store")
ACCESS_SHIFTS = (2, 1, 0)  # the largest first


def access(kind: str, base: Opnd) -> Ins:
    """`kind` with a computed `base` and index #0; fmt bound to "fmt"."""
    attrs = {"fmt": Bind("fmt"), "shift": Bind("old_shift")}
    if kind == "device_load":
        return Ins(kind, (base, zero()), attrs, name="access")
    return Ins(kind, (any_("value"), base, zero()), attrs, name="access")


def rewritten(kind: str, base: Use, index, shift) -> tuple[Emit, ...]:
    attrs = {"fmt": Bind("fmt"), "shift": shift}
    if kind == "device_load":
        return (Emit(kind, (base, index), attrs),)
    return (Emit(kind, (Use("value"), base, index), attrs),)


def format_shift(b) -> int:
    return FORMAT_SHIFT[b["fmt"]]


# --- a lea ------------------------------------------------------------------------------------------


def lea_in_range(b) -> bool:
    return format_shift(b) <= b["s"] <= format_shift(b) + 2


def lea_access_shift(b) -> int:
    return b["s"] - format_shift(b)


def zero_extends(b) -> bool:
    return b["lea"] == "ulea"


def fold_lea(kind: str) -> Rule:
    lea = Ins(("ulea", "ilea"), (reg("b"), reg("o")), {"shift": Bind("s")}, op="lea")
    return Rule(
        f"lea-{kind}",
        access(kind, defined_by(lea)),
        rewritten(kind, Use("b"), Use("o", abs=zero_extends, neg=False), lea_access_shift),
        lea_in_range,
        why="b + (ext64(o) << s) with s = fs + shift is the access's own address mode; "
        ".abs zero-extends exactly when the lea did",
    )


# --- a constant offset ------------------------------------------------------------------------------


def _offset(b):
    """K << t (the add's shift) in 16 bits: K < 256 and t <= 4, so it cannot wrap."""
    return b.m.shl(b.imm("K"), b.get("t", 0), 16)


def _divides(k: int):
    def divides(b):
        m = b.m
        low = m.const((1 << (format_shift(b) + k)) - 1, 16)
        return m.eq(m.and_(_offset(b), low, 16), m.const(0, 16), 16)

    return divides


def _index(k: int, negative: bool):
    def index(b):
        m = b.m
        units = m.lshr(_offset(b), format_shift(b) + k, 16)
        return m.sub(m.const(0, 16), units, 16) if negative else units

    return index


def fold_offset(kind: str, k: int) -> tuple[Rule, ...]:
    x = reg("x", size=64, neg=False)
    forms = (
        ("", Ins("iadd", (x, imm("K")), {"shift": Bind("t")}, size=64), False),
        (".2", Ins("iadd", (imm("K"), x), {"shift": 0}, size=64), False),
        ("-neg", Ins("iadd", (x, imm("K", neg=True)), {"shift": Bind("t")}, size=64), True),
    )
    return tuple(
        Rule(
            f"offset-{k}-{kind}{suffix}",
            access(kind, defined_by(add)),
            rewritten(kind, Use("x", abs=False), NewImm(_index(k, negative)), k),
            _divides(k),
            why=f"x {'-' if negative else '+'} K with K = (K >> (fs + {k})) << (fs + {k}): "
            "the access's address mode with an immediate index",
        )
        for suffix, add, negative in forms
    )


RULES: tuple[Rule, ...] = tuple(fold_lea(kind) for kind in ACCESSES) + tuple(
    rule for k in ACCESS_SHIFTS for kind in ACCESSES for rule in fold_offset(kind, k)
)


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass(
    "address-fold",
    "fold a lea (fs <= s <= fs + 2) or a constant offset into device_load/device_store",
    run,
)
