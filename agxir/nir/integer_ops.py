"""Semantics of NIR's integer, boolean and bit-field opcodes, written once against `BitVectors`.

Every function has the signature `(m, args, widths, w)`: the backend, the source values, their
widths and the destination width, and returns the destination's bits. Booleans are NIR's:
a bool1 is a 1-bit 0/1, a bool8/16/32 is 0 or ~0, so "true" is all ones at any width. Where
NIR's constant expression is C undefined behaviour, or the opcode's description calls the
result undefined (an out-of-range bitfield, an `amul` that overflows), the semantics call
`m.undefined_if(cond, reason)`: the result is undefined (poison) where `cond` holds, and
`agxir.nir.evaluate` propagates that to every user of the value (but an unchosen bcsel arm).
"""

from __future__ import annotations


def mask(width: int) -> int:
    return (1 << width) - 1


def bool_bits(m, truth, w: int):
    """NIR's encoding of a boolean at width w: ~0 for true (1 at one bit), 0 for false."""
    return m.select(truth, m.const(mask(w), w), m.const(0, w), w)


def truth(m, value, w: int):
    return m.negate(m.eq(value, m.const(0, w), w))


def resize(m, value, from_w: int, to_w: int, signed: bool = False):
    if to_w > from_w:
        return m.sext(value, from_w, to_w) if signed else m.zext(value, from_w, to_w)
    if to_w < from_w:
        return m.trunc(value, from_w, to_w)
    return value


def ule(m, a, b, w):
    return m.negate(m.ult(b, a, w))


def sle(m, a, b, w):
    return m.negate(m.slt(b, a, w))


def shift_count(m, count, count_w: int, w: int):
    """NIR shifts use the count modulo the operand's width (SM5 semantics)."""
    amount = m.and_(count, m.const(w - 1, count_w), count_w)
    return resize(m, amount, count_w, w)


# --- arithmetic -----------------------------------------------------------------------------


def iadd(m, a, ws, w):
    return m.add(a[0], a[1], w)


def isub(m, a, ws, w):
    return m.sub(a[0], a[1], w)


def imul(m, a, ws, w):
    return m.mul(a[0], a[1], w)


def ineg(m, a, ws, w):
    return m.sub(m.const(0, w), a[0], w)


def inot(m, a, ws, w):
    return m.not_(a[0], w)


def mov(m, a, ws, w):
    return a[0]


def iabs(m, a, ws, w):
    return m.select(m.slt(a[0], m.const(0, w), w), ineg(m, a, ws, w), a[0], w)


def isign(m, a, ws, w):
    zero = m.const(0, w)
    negative = m.select(m.slt(a[0], zero, w), m.const(mask(w), w), m.const(1, w), w)
    return m.select(m.eq(a[0], zero, w), zero, negative, w)


def iadd3(m, a, ws, w):
    return m.add(m.add(a[0], a[1], w), a[2], w)


def imad(m, a, ws, w):
    return m.add(m.mul(a[0], a[1], w), a[2], w)


def iand(m, a, ws, w):
    return m.and_(a[0], a[1], w)


def ior(m, a, ws, w):
    return m.or_(a[0], a[1], w)


def ixor(m, a, ws, w):
    return m.xor(a[0], a[1], w)


def bitfield_select(m, a, ws, w):
    return m.or_(m.and_(a[0], a[1], w), m.and_(m.not_(a[0], w), a[2], w), w)


def _minmax(pick_first):
    def semantics(m, a, ws, w):
        return m.select(pick_first(m, a[0], a[1], w), a[0], a[1], w)

    return semantics


imin = _minmax(lambda m, x, y, w: m.slt(x, y, w))
imax = _minmax(lambda m, x, y, w: m.slt(y, x, w))
umin = _minmax(lambda m, x, y, w: m.ult(x, y, w))
umax = _minmax(lambda m, x, y, w: m.ult(y, x, w))


def _high_product(signed: bool):
    def semantics(m, a, ws, w):
        wide = 2 * w
        x = resize(m, a[0], w, wide, signed)
        y = resize(m, a[1], w, wide, signed)
        return m.trunc(m.lshr(m.mul(x, y, wide), w, wide), wide, w)

    return semantics


imul_high = _high_product(True)
umul_high = _high_product(False)


def _widening_product(signed: bool):
    def semantics(m, a, ws, w):
        x = resize(m, a[0], ws[0], w, signed)
        y = resize(m, a[1], ws[1], w, signed)
        return m.mul(x, y, w)

    return semantics


imul_2x32_64 = _widening_product(True)
umul_2x32_64 = _widening_product(False)


def _mul_32x16(signed: bool):
    def semantics(m, a, ws, w):
        low = m.trunc(a[1], w, 16)
        return m.mul(a[0], resize(m, low, 16, w, signed), w)

    return semantics


imul_32x16 = _mul_32x16(True)
umul_32x16 = _mul_32x16(False)


def uadd_sat(m, a, ws, w):
    total = m.add(a[0], a[1], w)
    return m.select(m.ult(total, a[0], w), m.const(mask(w), w), total, w)


def usub_sat(m, a, ws, w):
    return m.select(m.ult(a[0], a[1], w), m.const(0, w), m.sub(a[0], a[1], w), w)


def _signed_saturate(m, exact, w):
    """Clamp a (w+1)-bit exact signed result to w bits."""
    wide = w + 1
    top_bits = (1 << (w - 1)) - 1
    top = m.const(top_bits, wide)
    bottom = m.const(mask(wide) ^ top_bits, wide)  # -2**(w-1) at w+1 bits
    clamped = m.select(m.slt(top, exact, wide), top, exact, wide)
    clamped = m.select(m.slt(clamped, bottom, wide), bottom, clamped, wide)
    return m.trunc(clamped, wide, w)


def iadd_sat(m, a, ws, w):
    x, y = (m.sext(v, w, w + 1) for v in a[:2])
    return _signed_saturate(m, m.add(x, y, w + 1), w)


def isub_sat(m, a, ws, w):
    x, y = (m.sext(v, w, w + 1) for v in a[:2])
    return _signed_saturate(m, m.sub(x, y, w + 1), w)


def uadd_carry(m, a, ws, w):
    carry = m.ult(m.add(a[0], a[1], w), a[0], w)
    return m.select(carry, m.const(1, w), m.const(0, w), w)


def usub_borrow(m, a, ws, w):
    return m.select(m.ult(a[0], a[1], w), m.const(1, w), m.const(0, w), w)


def _halving(signed: bool, rounding: bool):
    def semantics(m, a, ws, w):
        x, y = a[0], a[1]
        base = m.or_(x, y, w) if rounding else m.and_(x, y, w)
        half = m.xor(x, y, w)
        half = m.ashr_var(half, m.const(1, w), w) if signed else m.lshr(half, 1, w)
        return m.sub(base, half, w) if rounding else m.add(base, half, w)

    return semantics


ihadd = _halving(True, False)
uhadd = _halving(False, False)
irhadd = _halving(True, True)
urhadd = _halving(False, True)


def uabs_usub(m, a, ws, w):
    return m.select(m.ult(a[0], a[1], w), m.sub(a[1], a[0], w), m.sub(a[0], a[1], w), w)


def uabs_isub(m, a, ws, w):
    return m.select(m.slt(a[0], a[1], w), m.sub(a[1], a[0], w), m.sub(a[0], a[1], w), w)


# --- division, by long division so that both backends share it ------------------------------------


def udivmod(m, a, b, w):
    """(a / b, a % b) for unsigned w-bit a and b != 0, one restoring-division step per bit."""
    wide = w + 1
    divisor = m.zext(b, w, wide)
    quotient = m.const(0, w)
    remainder = m.const(0, wide)
    for i in reversed(range(w)):
        bit = m.zext(m.and_(m.lshr(a, i, w), m.const(1, w), w), w, wide)
        remainder = m.or_(m.shl(remainder, 1, wide), bit, wide)
        fits = m.negate(m.ult(remainder, divisor, wide))
        remainder = m.select(fits, m.sub(remainder, divisor, wide), remainder, wide)
        quotient = m.or_(quotient, m.select(fits, m.const(1 << i, w), m.const(0, w), w), w)
    return quotient, m.trunc(remainder, wide, w)


def _is_zero(m, v, w):
    return m.eq(v, m.const(0, w), w)


def udiv(m, a, ws, w):
    q, _ = udivmod(m, a[0], a[1], w)
    return m.select(_is_zero(m, a[1], w), m.const(0, w), q, w)


def umod(m, a, ws, w):
    _, r = udivmod(m, a[0], a[1], w)
    return m.select(_is_zero(m, a[1], w), m.const(0, w), r, w)


def _signed_parts(m, a, ws, w):
    x, y = a[0], a[1]
    zero = m.const(0, w)
    x_negative, y_negative = m.slt(x, zero, w), m.slt(y, zero, w)
    magnitude_x = m.select(x_negative, m.sub(zero, x, w), x, w)
    magnitude_y = m.select(y_negative, m.sub(zero, y, w), y, w)
    q, r = udivmod(m, magnitude_x, magnitude_y, w)
    # C: INT_MIN / -1 overflows, which is undefined behaviour in NIR's constant expression.
    minimum = m.const(1 << (w - 1), w)
    m.undefined_if(m.both(m.eq(x, minimum, w), m.eq(y, m.const(mask(w), w), w)),
                   "signed division overflow (INT_MIN / -1)")
    return x_negative, y_negative, q, r


def idiv(m, a, ws, w):
    x_negative, y_negative, q, _ = _signed_parts(m, a, ws, w)
    zero = m.const(0, w)
    different = m.negate(m.eq(m.select(x_negative, m.const(1, 1), m.const(0, 1), 1),
                              m.select(y_negative, m.const(1, 1), m.const(0, 1), 1), 1))
    q = m.select(different, m.sub(zero, q, w), q, w)
    return m.select(_is_zero(m, a[1], w), zero, q, w)


def irem(m, a, ws, w):
    x_negative, _, _, r = _signed_parts(m, a, ws, w)
    zero = m.const(0, w)
    r = m.select(x_negative, m.sub(zero, r, w), r, w)
    return m.select(_is_zero(m, a[1], w), zero, r, w)


def imod(m, a, ws, w):
    remainder = irem(m, a, ws, w)
    zero = m.const(0, w)
    same_sign = m.eq(m.select(m.slt(a[0], zero, w), m.const(1, 1), m.const(0, 1), 1),
                     m.select(m.slt(a[1], zero, w), m.const(1, 1), m.const(0, 1), 1), 1)
    keep = m.either(_is_zero(m, remainder, w), same_sign)
    return m.select(keep, remainder, m.add(remainder, a[1], w), w)


def udiv_aligned_4(m, a, ws, w):
    m.undefined_if(truth(m, m.and_(a[0], m.const(3, w), w), w), "udiv_aligned_4 of a non-multiple of 4")
    return m.lshr(a[0], 2, w)


# --- shifts and rotates -------------------------------------------------------------------------


def ishl(m, a, ws, w):
    return m.shl_var(a[0], shift_count(m, a[1], ws[1], w), w)


def ishr(m, a, ws, w):
    return m.ashr_var(a[0], shift_count(m, a[1], ws[1], w), w)


def ushr(m, a, ws, w):
    return m.lshr_var(a[0], shift_count(m, a[1], ws[1], w), w)


def _rotate(left: bool):
    def semantics(m, a, ws, w):
        amount = shift_count(m, a[1], ws[1], w)
        back = m.and_(m.sub(m.const(0, w), amount, w), m.const(w - 1, w), w)
        if left:
            return m.or_(m.shl_var(a[0], amount, w), m.lshr_var(a[0], back, w), w)
        return m.or_(m.lshr_var(a[0], amount, w), m.shl_var(a[0], back, w), w)

    return semantics


urol = _rotate(True)
uror = _rotate(False)


# --- comparisons and selects ------------------------------------------------------------------------


def _compare(test):
    def semantics(m, a, ws, w):
        return bool_bits(m, test(m, a[0], a[1], ws[0]), w)

    return semantics


ieq = _compare(lambda m, x, y, w: m.eq(x, y, w))
ine = _compare(lambda m, x, y, w: m.negate(m.eq(x, y, w)))
ilt = _compare(lambda m, x, y, w: m.slt(x, y, w))
ige = _compare(lambda m, x, y, w: sle(m, y, x, w))
ult = _compare(lambda m, x, y, w: m.ult(x, y, w))
uge = _compare(lambda m, x, y, w: ule(m, y, x, w))


def _bit_test(want_set: bool):
    def semantics(m, a, ws, w):
        amount = shift_count(m, a[1], ws[1], ws[0])
        bit = m.and_(m.lshr_var(a[0], amount, ws[0]), m.const(1, ws[0]), ws[0])
        is_set = truth(m, bit, ws[0])
        return bool_bits(m, is_set if want_set else m.negate(is_set), w)

    return semantics


bitnz = _bit_test(True)
bitz = _bit_test(False)


def bcsel(m, a, ws, w):
    return m.select(truth(m, a[0], ws[0]), a[1], a[2], w)


def icsel_eqz(m, a, ws, w):
    return m.select(_is_zero(m, a[0], w), a[1], a[2], w)


def bounds_agx(m, a, ws, w):
    return m.select(sle(m, a[1], a[2], w), a[0], m.const(0, w), w)


# --- conversions ------------------------------------------------------------------------------


def u2u(m, a, ws, w):
    return resize(m, a[0], ws[0], w)


def i2i(m, a, ws, w):
    return resize(m, a[0], ws[0], w, signed=True)


def b2i(m, a, ws, w):
    return m.select(truth(m, a[0], ws[0]), m.const(1, w), m.const(0, w), w)


def b2b(m, a, ws, w):
    return bool_bits(m, truth(m, a[0], ws[0]), w)


# --- packing ------------------------------------------------------------------------------------


def _pack(m, a, ws, w):
    result = m.const(0, w)
    offset = 0
    for value, width in zip(a, ws, strict=True):
        piece = m.zext(value, width, w)
        result = m.or_(result, m.shl(piece, offset, w) if offset else piece, w)
        offset += width
    return result


pack_split = _pack


def unpack_low(m, a, ws, w):
    return m.trunc(a[0], ws[0], w)


def unpack_high(m, a, ws, w):
    return m.trunc(m.lshr(a[0], ws[0] - w, ws[0]), ws[0], w)
