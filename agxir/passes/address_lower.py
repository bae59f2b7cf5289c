"""Lowering what address fusion left (Mesa `lower_lea` and the amul lowering, design notes
section 7 step 4), as a rule table.

After `address-fold`, the leas that did not fit an access (a shift outside fs..fs+2, a lea
read by something other than an access's base, an access with a non-zero index) and all the
relaxed `amul`/`aadd` go back to plain opcodes:

* `lea-shift` (s <= 4): `ulea(b, o, s)` -> `iadd b, o.abs shift=s` and `ilea` -> `iadd b, o
  shift=s`: a 64-bit iadd extends a 32-bit source as it reads it (zero-extends with `.abs`)
  and shifts it in 64 bits, which is exactly the lea.
* `lea-wide` (5 <= s <= 31): three instructions, `w = u2u64/i2i64 o`,
  `t = bfi #0, w, #s mask=0` (a 64-bit shift) and `iadd b, t`.
* `amul` -> `imul`, `aadd` -> `iadd shift=0`: a defined amul/aadd computes its exact result,
  which is below 2^31, so the wrapping opcode computes the same bits. The target is defined
  where the source is not, which refinement allows; the promise is dropped for good here,
  after the passes that relied on it (Mesa lowers amul to imul at the same point).
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.rewrite import Bind, Emit, Ins, NewImm, Rule, Use, any_, apply_rules, reg

ADD_SHIFT_LIMIT = 4  # iadd's shift field
EXTEND_FOR = {"ulea": "u2u64", "ilea": "i2i64"}


def _lea() -> Ins:
    return Ins(("ulea", "ilea"), (reg("b"), reg("o")), {"shift": Bind("s")}, op="lea")


def zero_extends(b) -> bool:
    return b["lea"] == "ulea"


def extension(b) -> str:
    return EXTEND_FOR[b["lea"]]


def fits_add(b) -> bool:
    return b["s"] <= ADD_SHIFT_LIMIT


def needs_shift(b) -> bool:
    return b["s"] > ADD_SHIFT_LIMIT


def shift_amount(b):
    return b.m.const(b["s"], 16)


LEA = (
    Rule(
        "lea-shift",
        _lea(),
        (Emit("iadd", (Use("b"), Use("o", abs=zero_extends)), {"shift": Bind("s")}),),
        fits_add,
        why="iadd64 reads a 32-bit o extended (zero with .abs) and shifts it in 64 bits",
    ),
    Rule(
        "lea-wide",
        _lea(),
        (
            Emit(extension, (Use("o"),), size=64, name="wide"),
            Emit("bfi", (NewImm(0), Use("wide"), NewImm(shift_amount)), {"mask": 0}, size=64,
                 name="scaled"),
            Emit("iadd", (Use("b"), Use("scaled")), {"shift": 0}),
        ),
        needs_shift,
        why="bfi64 #0, ext64(o), #s is ext64(o) << s in 64 bits; the add is the lea's",
    ),
)

RELAXED = (
    Rule(
        "amul",
        Ins("amul", (any_("a"), any_("b"))),
        (Emit("imul", (Use("a"), Use("b"))),),
        why="a defined amul's exact product is below 2^31: imul's wrapped product equals it",
    ),
    Rule(
        "aadd",
        Ins("aadd", (any_("a"), any_("b"))),
        (Emit("iadd", (Use("a"), Use("b")), {"shift": 0}),),
        why="a defined aadd's exact sum is below 2^31: iadd's wrapped sum equals it",
    ),
)

RULES: tuple[Rule, ...] = LEA + RELAXED


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass(
    "address-lower",
    "lower leftover ulea/ilea to 64-bit iadd (and shift), amul/aadd to imul/iadd",
    run,
)
