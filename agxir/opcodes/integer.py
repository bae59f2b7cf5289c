"""Semantics of the integer, bitwise, compare/select and address-math opcodes.

Each function takes a backend `m` (see `bitvectors.BitVectors`) and the instruction, and returns
the destination's bits. Only static facts (sizes, attributes) steer Python control flow;
everything that depends on a value goes through `m`.
"""

from __future__ import annotations

from agxir.opcodes.operands import (
    inverted,
    mask,
    read_float_compare,
    read_int,
    read_int_compare,
    read_raw,
)

INT32_MAX = 0x7FFFFFFF


def dest_width(ins) -> int:
    return ins.dest.size


def iadd(m, ins):
    w = dest_width(ins)
    a = read_int(m, ins, 0, w)
    b = read_int(m, ins, 1, w)
    shift = ins.attrs["shift"]
    if shift:
        b = m.shl(b, shift, w)
    return m.add(a, b, w)


def imad(m, ins):
    w = dest_width(ins)
    product = m.mul(read_int(m, ins, 0, w), read_int(m, ins, 1, w), w)
    c = read_int(m, ins, 2, w)
    shift = ins.attrs["shift"]
    if shift:
        c = m.shl(c, shift, w)
    return m.add(product, c, w)


def imul(m, ins):
    w = dest_width(ins)
    return m.mul(read_int(m, ins, 0, w), read_int(m, ins, 1, w), w)


# Truth table bit k is the result for (a | b << 1) == k.
def _bitop_expression(m, tt: int, a, b, w: int):
    ones = m.const(mask(w), w)
    builders = {
        0x0: lambda: m.const(0, w),
        0x1: lambda: m.not_(m.or_(a, b, w), w),
        0x2: lambda: m.and_(a, m.not_(b, w), w),
        0x3: lambda: m.not_(b, w),
        0x4: lambda: m.and_(m.not_(a, w), b, w),
        0x5: lambda: m.not_(a, w),
        0x6: lambda: m.xor(a, b, w),
        0x7: lambda: m.not_(m.and_(a, b, w), w),
        0x8: lambda: m.and_(a, b, w),
        0x9: lambda: m.not_(m.xor(a, b, w), w),
        0xA: lambda: a,
        0xB: lambda: m.or_(a, m.not_(b, w), w),
        0xC: lambda: b,
        0xD: lambda: m.or_(m.not_(a, w), b, w),
        0xE: lambda: m.or_(a, b, w),
        0xF: lambda: ones,
    }
    return builders[tt]()


def bitop(m, ins):
    w = dest_width(ins)
    return _bitop_expression(m, ins.attrs["tt"], read_int(m, ins, 0, w), read_int(m, ins, 1, w), w)


def _field_mask(ins, w: int) -> int:
    bits = ins.attrs["mask"] or w
    return mask(min(bits, w))


def _shift_amount(m, ins, index: int, w: int):
    """Variable shift counts use their low log2(width) bits, as the hardware's do."""
    return m.and_(read_int(m, ins, index, w), m.const(w - 1, w), w)


def bfi(m, ins):
    w = dest_width(ins)
    field = _field_mask(ins, w)
    base = read_int(m, ins, 0, w)
    insert = m.and_(read_int(m, ins, 1, w), m.const(field, w), w)
    amount = _shift_amount(m, ins, 2, w)
    placed_mask = m.shl_var(m.const(field, w), amount, w)
    kept = m.and_(base, m.not_(placed_mask, w), w)
    return m.or_(kept, m.shl_var(insert, amount, w), w)


def bfeil(m, ins):
    w = dest_width(ins)
    field = _field_mask(ins, w)
    base = read_int(m, ins, 0, w)
    extracted = m.lshr_var(read_int(m, ins, 1, w), _shift_amount(m, ins, 2, w), w)
    kept = m.and_(base, m.const(mask(w) ^ field, w), w)
    return m.or_(kept, m.and_(extracted, m.const(field, w), w), w)


def extr(m, ins):
    w = dest_width(ins)
    wide = 2 * w
    low = m.zext(read_int(m, ins, 0, w), w, wide)
    high = m.shl(m.zext(read_int(m, ins, 1, w), w, wide), w, wide)
    joined = m.or_(high, low, wide)
    amount = m.and_(m.zext(read_int(m, ins, 2, w), w, wide), m.const(wide - 1, wide), wide)
    shifted = m.trunc(m.lshr_var(joined, amount, wide), wide, w)
    return m.and_(shifted, m.const(_field_mask(ins, w), w), w)


def asr(m, ins):
    w = dest_width(ins)
    return m.ashr_var(read_int(m, ins, 0, w), _shift_amount(m, ins, 1, w), w)


def mov_imm(m, ins):
    w = dest_width(ins)
    return m.const(ins.attrs["value"] & mask(w), w)


def signext(m, ins):
    return read_int(m, ins, 0, dest_width(ins))


def uadd_sat(m, ins):
    """The exact sum of the sources extended to 64 bits (sign unless `.abs`), clamped to
    [0, 2^w - 1]: with `.abs` on both it is NIR's uadd_sat, AGX `iadd.sat |a|, |b|`. `.abs`
    matters even on a full-width source here, where the add is wider than the destination."""
    w = dest_width(ins)
    exact = m.add(read_int(m, ins, 0, 64), read_int(m, ins, 1, 64), 64)
    top = m.const(mask(w), 64)
    clamped = m.select(m.slt(top, exact, 64), top, exact, 64)
    clamped = m.select(m.slt(exact, m.const(0, 64), 64), m.const(0, 64), clamped, 64)
    return m.trunc(clamped, 64, w)


def _bool_to_bits(m, truth, w: int):
    return m.select(truth, m.const(1, w), m.const(0, w), w)


def icmp(m, ins):
    truth, _ = read_int_compare(m, ins, ins.attrs["cond"])
    return _bool_to_bits(m, inverted(m, truth, ins.attrs["inv"]), dest_width(ins))


def fcmp(m, ins):
    truth = read_float_compare(m, ins, ins.attrs["cond"])
    return _bool_to_bits(m, inverted(m, truth, ins.attrs["inv"]), dest_width(ins))


def icmpsel(m, ins):
    w = dest_width(ins)
    truth, _ = read_int_compare(m, ins, ins.attrs["cond"])
    return m.select(truth, read_raw(m, ins, 2, w), read_raw(m, ins, 3, w), w)


def fcmpsel(m, ins):
    w = dest_width(ins)
    truth = read_float_compare(m, ins, ins.attrs["cond"])
    return m.select(truth, read_raw(m, ins, 2, w), read_raw(m, ins, 3, w), w)


def ballot(m, ins):
    """Bit t set where thread t of the wave runs this with a nonzero source."""
    size = ins.srcs[0].size
    value = read_raw(m, ins, 0, size)
    return m.ballot(m.negate(m.eq(value, m.const(0, size), size)))


def icmp_ballot(m, ins):
    truth, _ = read_int_compare(m, ins, ins.attrs["cond"])
    return m.ballot(inverted(m, truth, ins.attrs["inv"]))


def fcmp_ballot(m, ins):
    truth = read_float_compare(m, ins, ins.attrs["cond"])
    return m.ballot(inverted(m, truth, ins.attrs["inv"]))


# --- address math -------------------------------------------------------------------------


def _exact_unsigned_operands(m, ins):
    a = m.zext(read_int(m, ins, 0, 32), 32, 64)
    b = m.zext(read_int(m, ins, 1, 32), 32, 64)
    return a, b


def amul(m, ins):
    """A 32-bit multiply that promises its exact unsigned product is at most INT32_MAX."""
    a, b = _exact_unsigned_operands(m, ins)
    exact = m.mul(a, b, 64)
    m.undefined_if(m.ult(m.const(INT32_MAX, 64), exact, 64), "amul overflow")
    return m.trunc(exact, 64, 32)


def aadd(m, ins):
    """A 32-bit add that promises its exact unsigned sum is at most INT32_MAX."""
    a, b = _exact_unsigned_operands(m, ins)
    exact = m.add(a, b, 64)
    m.undefined_if(m.ult(m.const(INT32_MAX, 64), exact, 64), "aadd overflow")
    return m.trunc(exact, 64, 32)


def u2u64(m, ins):
    src = ins.srcs[0]
    return m.zext(read_raw(m, ins, 0), src.size, 64)


def i2i64(m, ins):
    src = ins.srcs[0]
    return m.sext(read_raw(m, ins, 0), src.size, 64)


def _lea(m, ins, extend):
    base = read_raw(m, ins, 0)
    index = extend(read_raw(m, ins, 1), 32, 64)
    shift = ins.attrs["shift"]
    if shift:
        index = m.shl(index, shift, 64)
    return m.add(base, index, 64)


def ulea(m, ins):
    """base64 + (zext64(index32) << shift): the shift happens after extension, in 64 bits."""
    return _lea(m, ins, m.zext)


def ilea(m, ins):
    """base64 + (sext64(index32) << shift)."""
    return _lea(m, ins, m.sext)
