"""Inline immediates (Mesa `agx_optimizer_inline_imm`, forward step 3): a source defined by
`mov_imm` becomes an immediate where the slot takes one, as a rule table.

Immediates are 16 bits; an integer slot sign-extends one unless it carries `.abs`, a RAW slot
zero-extends it, a float slot reads an 8-bit minifloat. Per destination width W of the
`mov_imm` (16, 32, 64), each rule is a family over the values it inlines (`OneOf`: the
audit proves every one of them):

    imm8-W   value v < 256            -> #v        INT and RAW slots taking immediates
                                                   (convert's, but in mode f2f)
    neg-W    value 2^W - k, 0 < k < 256 -> #k.neg  slots allowing .neg (iadd b, imad c):
             -k at any width, so 16- and 64-bit sources keep their sign (SubInlineImmediate)
    fimm-W   the f16/f32 bits of a minifloat k -> #k   float slots of ALU ops (exact)

Never through a modifier on the use: a `.neg` use would need the negated value (Mesa
3a87d2cf), an `.abs` one a zero-extension. Not into compare slots, whose width is that of
the wider source (a 16-bit immediate would narrow it), nor into phis (Mesa 5b50040c: a
64-bit phi's immediate). Values other than these stay in their `mov_imm`: a 64-bit address
add never sees more than 8 bits of one (9f5a4a96). Memory indices and the address-math
opcodes (amul, aadd) are left to the address passes; see NOT_INLINED for the rest.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.opcodes.operands import float_to_bits, minifloat_value
from agxir.opcodes.spec import FLOAT, INT, RAW
from agxir.opcodes.table import ROWS
from agxir.passes.pass_ import Pass
from agxir.rewrite import Ins, NewImm, OneOf, Rule, apply_rules, defined_by, slot_spec
from agxir.rewrite.skeletons import has_compare_slots

SIZES = (16, 32, 64)
# Rows left out (besides memory and address math, which the address passes own): bfi, bfeil
# and extr, whose 65-value mask attribute, and the selects, whose compare slots, multiply
# the audit's enumeration of 256 values per rule past what CI affords
# (docs/agx-departures.md).
NOT_INLINED = frozenset({"bfi", "bfeil", "extr", "icmpsel", "fcmpsel"})


def mov_imm_pattern(size: int, values) -> Ins:
    return Ins("mov_imm", (), {"value": OneOf(tuple(values), "v")}, size=size, name="move")


def use_rows(kinds, modifier: str | None = None, alu: bool = False) -> tuple[str, ...]:
    """The opcodes with a slot the rule may inline into (the precondition decides per slot;
    naming the rows keeps the audit from enumerating every other opcode as a use)."""
    found = []
    for row in ROWS:
        if row.may_ub or not row.pure or row.name in NOT_INLINED:
            continue
        compare = has_compare_slots(row)
        for position, spec in enumerate(row.srcs):
            if spec.imm is None or spec.kind not in kinds or (compare and position < 2):
                continue
            if modifier is not None and not spec.allows(modifier):
                continue
            if alu and spec.width_rule is None:
                continue
            found.append(row.name)
            break
    return tuple(found)


def _use_of(size: int, values, rows) -> Ins:
    return Ins(rows, srcs=None, name="user",
               focus=defined_by(mov_imm_pattern(size, values), "use", abs=False, neg=False))


def _slot(b, kinds, modifier: str | None = None):
    spec = slot_spec(b.root, b.position)
    if spec is None or spec.imm is None or spec.kind not in kinds:
        return None
    if modifier is not None and not spec.allows(modifier):
        return None
    if has_compare_slots(b.root.opcode) and b.position < 2:
        return None
    return spec


def int_slot(b) -> bool:
    # convert takes an integer immediate in every mode AGX encodes, not f2f (Mesa has none)
    if b.root.name == "convert" and b.root.attrs["mode"] == "f2f":
        return False
    return _slot(b, (INT, RAW)) is not None


def neg_slot(b) -> bool:
    return _slot(b, (INT,), "neg") is not None


def float_slot(b) -> bool:
    spec = _slot(b, (FLOAT,))
    return spec is not None and spec.width_rule is not None


def _minifloats(size: int) -> dict[int, int]:
    """f<size> bits -> the minifloat encoding with that value (the first, for +-0)."""
    table: dict[int, int] = {}
    for k in range(256):
        table.setdefault(float_to_bits(minifloat_value(k), size), k)
    return table


MINIFLOATS = {16: _minifloats(16), 32: _minifloats(32)}


def _rules(size: int) -> tuple[Rule, ...]:
    found = (
        Rule(f"imm8-{size}", _use_of(size, range(256), use_rows((INT, RAW))), NewImm(lambda b: b.m.const(b["v"], 16)),
             int_slot, why="v < 256 reads the same sign- or zero-extended"),
        Rule(f"neg-{size}", _use_of(size, [(1 << size) - k for k in range(1, 256)],
                                     use_rows((INT,), "neg")),
             NewImm(lambda b, size=size: b.m.const((1 << size) - b["v"], 16), neg=True),
             neg_slot, why="-k at the slot's width is 2^W - k extended by sign"),
    )
    if size in MINIFLOATS:
        table = MINIFLOATS[size]
        found += (Rule(f"fimm-{size}", _use_of(size, tuple(table), use_rows((FLOAT,), alu=True)),
                       NewImm(lambda b, table=table: b.m.const(table[b["v"]], 16)),
                       float_slot, why="the minifloat has exactly the f16/f32 value"),)
    return found


RULES = tuple(rule for size in SIZES for rule in _rules(size))


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass("inline-imm", "read a mov_imm's value as an immediate where the slot takes it "
            "(Mesa inline_imm)", run)
