"""Semantics of NIR's bit-field, bit-counting and AGX-specific opcodes against `BitVectors`.

Same conventions as `agxir.nir.integer_ops`. Shift amounts are always masked into range
before they reach the machine, also on paths whose result is undefined, so the concrete
backend never shifts by a huge count. GLSL's "undefined" bitfield results (a negative or
too large offset or count) are undefined values, not NIR's constant-folding choice of 0.
"""

from __future__ import annotations

from agxir.nir.integer_ops import mask, resize, truth

# --- helpers ------------------------------------------------------------------------------


def _low_ones(m, count, count_w: int, w: int):
    """(1 << count) - 1 at width w for 0 <= count <= w (count masked to 0..127)."""
    wide = 128
    amount = resize(m, m.and_(count, m.const(127, count_w), count_w), count_w, wide)
    ones = m.sub(m.shl_var(m.const(1, wide), amount, wide), m.const(1, wide), wide)
    return m.trunc(ones, wide, w)


def _masked(m, value, bits: int, w: int):
    return m.and_(value, m.const(bits, w), w)


def _wide_sum_exceeds(m, offset, bits, limit: int):
    """offset + bits > limit, both signed 32-bit, computed without wrapping."""
    total = m.add(m.sext(offset, 32, 64), m.sext(bits, 32, 64), 64)
    return m.slt(m.const(limit, 64), total, 64)


def _out_of_range(m, offset, bits):
    zero = m.const(0, 32)
    negative = m.either(m.slt(bits, zero, 32), m.slt(offset, zero, 32))
    return m.either(negative, _wide_sum_exceeds(m, offset, bits, 32))


# --- GLSL bitfield operations ----------------------------------------------------------------


def ubitfield_extract(m, a, ws, w):
    base, offset, bits = a
    zero = m.const(0, 32)
    bits_zero = m.eq(bits, zero, 32)
    m.undefined_if(m.both(m.negate(bits_zero), _out_of_range(m, offset, bits)),
                   "ubitfield_extract offset/bits out of range (undefined per GLSL)")
    shifted = m.lshr_var(base, _masked(m, offset, 31, 32), 32)
    return m.select(bits_zero, zero, m.and_(shifted, _low_ones(m, bits, 32, 32), 32), 32)


def ibitfield_extract(m, a, ws, w):
    base, offset, bits = a
    zero = m.const(0, 32)
    bits_zero = m.eq(bits, zero, 32)
    m.undefined_if(m.both(m.negate(bits_zero), _out_of_range(m, offset, bits)),
                   "ibitfield_extract offset/bits out of range (undefined per GLSL)")
    up = _masked(m, m.sub(m.sub(m.const(32, 32), offset, 32), bits, 32), 31, 32)
    down = _masked(m, m.sub(m.const(32, 32), bits, 32), 31, 32)
    field = m.ashr_var(m.shl_var(base, up, 32), down, 32)
    return m.select(bits_zero, zero, field, 32)


def bitfield_insert(m, a, ws, w):
    base, insert, offset, bits = a
    bits_zero = m.eq(bits, m.const(0, 32), 32)
    m.undefined_if(m.both(m.negate(bits_zero), _out_of_range(m, offset, bits)),
                   "bitfield_insert offset/bits out of range (undefined per GLSL)")
    amount = _masked(m, offset, 31, 32)
    field = m.shl_var(_low_ones(m, bits, 32, 32), amount, 32)
    inserted = m.or_(m.and_(base, m.not_(field, 32), 32),
                     m.and_(m.shl_var(insert, amount, 32), field, 32), 32)
    return m.select(bits_zero, base, inserted, 32)


def _sm5_extract(signed: bool):
    def semantics(m, a, ws, w):
        base = a[0]
        offset = _masked(m, a[1], 31, 32)
        bits = _masked(m, a[2], 31, 32)
        shift_right = m.ashr_var if signed else m.lshr_var
        up = _masked(m, m.sub(m.sub(m.const(32, 32), bits, 32), offset, 32), 31, 32)
        down = _masked(m, m.sub(m.const(32, 32), bits, 32), 31, 32)
        fits = m.ult(m.add(offset, bits, 32), m.const(32, 32), 32)
        field = m.select(fits, shift_right(m.shl_var(base, up, 32), down, 32),
                         shift_right(base, offset, 32), 32)
        return m.select(m.eq(bits, m.const(0, 32), 32), m.const(0, 32), field, 32)

    return semantics


ubfe = _sm5_extract(False)
ibfe = _sm5_extract(True)


def bfm(m, a, ws, w):
    bits = _masked(m, a[0], 31, 32)
    offset = _masked(m, a[1], 31, 32)
    return m.shl_var(_low_ones(m, bits, 32, 32), offset, 32)


def _trailing_zeros(m, value, w: int):
    """The index of the lowest set bit (w when value is 0)."""
    result = m.const(w, w)
    for i in reversed(range(w)):
        bit_set = truth(m, m.and_(value, m.const(1 << i, w), w), w)
        result = m.select(bit_set, m.const(i, w), result, w)
    return result


def bfi(m, a, ws, w):
    field, insert, base = a
    placed = m.shl_var(insert, _masked(m, _trailing_zeros(m, field, 32), 31, 32), 32)
    merged = m.or_(m.and_(base, m.not_(field, 32), 32), m.and_(placed, field, 32), 32)
    return m.select(m.eq(field, m.const(0, 32), 32), base, merged, 32)


def _byte_word_index(m, index, field_bits: int, w: int, op: str):
    """The shift amount index * field_bits at width max(w, 32) (C promotes narrower
    sources to int), undefined when it reaches that width (a C shift past the width)."""
    wide = max(w, 32)
    lanes = wide // field_bits
    m.undefined_if(m.negate(m.ult(index, m.const(lanes, w), w)),
                   f"{op} index beyond a {wide}-bit C value")
    lane = _masked(m, resize(m, index, w, wide), lanes - 1, wide)
    return m.mul(lane, m.const(field_bits, wide), wide), wide


def _extract(field_bits: int, signed: bool, op: str):
    def semantics(m, a, ws, w):
        amount, wide = _byte_word_index(m, a[1], field_bits, w, op)
        shift = m.ashr_var if signed else m.lshr_var  # int8_t/int16_t promote signed
        shifted = shift(resize(m, a[0], w, wide, signed), amount, wide)
        return resize(m, m.trunc(shifted, wide, field_bits), field_bits, w, signed)

    return semantics


extract_u8 = _extract(8, False, "extract_u8")
extract_i8 = _extract(8, True, "extract_i8")
extract_u16 = _extract(16, False, "extract_u16")
extract_i16 = _extract(16, True, "extract_i16")


def _insert(field_bits: int, op: str):
    def semantics(m, a, ws, w):
        amount, wide = _byte_word_index(m, a[1], field_bits, w, op)
        piece = m.and_(resize(m, a[0], w, wide), m.const(mask(field_bits), wide), wide)
        return resize(m, m.shl_var(piece, amount, wide), wide, w)

    return semantics


insert_u8 = _insert(8, "insert_u8")
insert_u16 = _insert(16, "insert_u16")


# --- counting -----------------------------------------------------------------------------------


def _bit(m, value, i: int, w: int):
    return truth(m, m.and_(value, m.const(1 << i, w), w), w)


def bit_count(m, a, ws, w):
    total = m.const(0, w)
    for i in range(ws[0]):
        total = m.add(total, m.select(_bit(m, a[0], i, ws[0]), m.const(1, w), m.const(0, w), w), w)
    return total


def find_lsb(m, a, ws, w):
    result = m.const(mask(w), w)
    for i in reversed(range(ws[0])):
        result = m.select(_bit(m, a[0], i, ws[0]), m.const(i, w), result, w)
    return result


def _highest_set(m, value, value_w: int, w: int):
    result = m.const(mask(w), w)
    for i in range(value_w):
        result = m.select(_bit(m, value, i, value_w), m.const(i, w), result, w)
    return result


def ufind_msb(m, a, ws, w):
    return _highest_set(m, a[0], ws[0], w)


def ifind_msb(m, a, ws, w):
    negative = m.slt(a[0], m.const(0, ws[0]), ws[0])
    flipped = m.select(negative, m.not_(a[0], ws[0]), a[0], ws[0])
    return _highest_set(m, flipped, ws[0], w)


def uclz(m, a, ws, w):
    highest = _highest_set(m, a[0], ws[0], w)
    return m.sub(m.const(ws[0] - 1, w), highest, w)


def bitfield_reverse(m, a, ws, w):
    result = m.const(0, w)
    for i in range(w):
        bit = m.and_(m.lshr(a[0], i, w), m.const(1, w), w)
        result = m.or_(result, m.shl(bit, w - 1 - i, w) if w - 1 - i else bit, w)
    return result


# --- AGX pseudo-opcodes -------------------------------------------------------------------------


def amul(m, a, ws, w):
    """A multiply that promises its exact unsigned product fits in w-1 bits (the AGX row's
    INT32_MAX at 32 bits: an offset into a buffer of at most INT32_MAX bytes)."""
    wide = 2 * w
    exact = m.mul(m.zext(a[0], w, wide), m.zext(a[1], w, wide), wide)
    limit = m.const((1 << (w - 1)) - 1, wide)
    m.undefined_if(m.ult(limit, exact, wide), "amul overflow")
    return m.trunc(exact, wide, w)


def _agx_shift(m, shift, w: int, limit: int, op: str, keep: int):
    """The shift amount, undefined above `limit`; masked with `keep` for the machine."""
    m.undefined_if(m.ult(m.const(limit, w), shift, w), f"{op} shift above {limit}")
    return _masked(m, shift, keep, w)


def imadshl_agx(m, a, ws, w):
    amount = _agx_shift(m, a[3], w, 4, "imadshl_agx", w - 1 if w > 1 else 0)
    return m.add(m.mul(a[0], a[1], w), m.shl_var(a[2], amount, w), w)


def imsubshl_agx(m, a, ws, w):
    amount = _agx_shift(m, a[3], w, 4, "imsubshl_agx", w - 1 if w > 1 else 0)
    return m.sub(m.mul(a[0], a[1], w), m.shl_var(a[2], amount, w), w)


def _lea(signed: bool, op: str):
    def semantics(m, a, ws, w):
        amount = resize(m, _agx_shift(m, a[2], ws[2], 63, op, 63), ws[2], 64)
        index = resize(m, a[1], ws[1], 64, signed)
        return m.add(a[0], m.shl_var(index, amount, 64), 64)

    return semantics


ulea_agx = _lea(False, "ulea_agx")
ilea_agx = _lea(True, "ilea_agx")


def extr_agx(m, a, ws, w):
    """((b:a) >> (c & 0x7f)) & mask, mask = (1 << d) - 1 or ~0 when d is 0; 0 for shifts of
    64 and more. d is a constant by contract; d >= 32 is C undefined behaviour."""
    low, high, shift, count = a
    m.undefined_if(m.ult(m.const(31, 32), count, 32), "extr_agx field of 32 bits or more")
    joined = m.or_(m.shl(m.zext(high, 32, 64), 32, 64), m.zext(low, 32, 64), 64)
    amount = m.zext(_masked(m, shift, 0x7F, 32), 32, 64)
    in_range = m.ult(amount, m.const(64, 64), 64)
    shifted = m.trunc(m.lshr_var(joined, _masked(m, amount, 63, 64), 64), 64, 32)
    field = m.select(m.eq(count, m.const(0, 32), 32), m.const(mask(32), 32),
                     _low_ones(m, count, 32, 32), 32)
    return m.select(in_range, m.and_(shifted, field, 32), m.const(0, 32), 32)

