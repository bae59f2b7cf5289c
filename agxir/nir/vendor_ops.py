"""Semantics of NIR's packed dot products, 24-bit multiplies, bit-scan-reverse, funnel shift
and the few backend-specific opcodes (ir3, AGX) that nir_opt_algebraic.py rewrites.

Same conventions as `agxir.nir.integer_ops`; each function follows the constant expression
in nir_opcodes.py. The `*_relaxed` 24-bit multiplies "assume the input is in the 24-bit
range": outside it their result is undefined.
"""

from __future__ import annotations

from agxir.nir.integer_ops import mask, resize, truth


def _bit(m, value, index: int, w: int):
    return truth(m, m.and_(value, m.const(1 << index, w), w), w)


def _lane(m, value, index: int, lane_w: int, signed: bool, wide: int):
    piece = m.trunc(m.lshr(value, index * lane_w, 32) if index else value, 32, lane_w)
    return resize(m, piece, lane_w, wide, signed)


def _dot(lane_w: int, signed_a: bool, signed_b: bool, saturate: str | None):
    lanes = 32 // lane_w

    def semantics(m, a, ws, w):
        wide = 64 if saturate else 32
        # the unsigned forms' accumulator is a uint32, as their comment ("clamped to
        # [0, 0xffffffff]") and hardware read it; nir_opcodes.py types it int32, so NIR's
        # constant folder sign-extends it (docs/nir-audit.md)
        total = resize(m, a[2], 32, wide, signed=saturate != "unsigned")
        for i in range(lanes):
            x = _lane(m, a[0], i, lane_w, signed_a, wide)
            y = _lane(m, a[1], i, lane_w, signed_b, wide)
            total = m.add(total, m.mul(x, y, wide), wide)
        if saturate == "signed":
            top, bottom = m.const(0x7FFFFFFF, 64), m.const(mask(64) ^ 0x7FFFFFFF, 64)
            total = m.select(m.slt(total, top, 64), total, top, 64)
            total = m.select(m.slt(bottom, total, 64), total, bottom, 64)
        elif saturate == "unsigned":
            top = m.const(0xFFFFFFFF, 64)
            total = m.select(m.ult(total, top, 64), total, top, 64)
        return m.trunc(total, wide, 32) if saturate else total

    return semantics


sdot_4x8_iadd = _dot(8, True, True, None)
udot_4x8_uadd = _dot(8, False, False, None)
sudot_4x8_iadd = _dot(8, True, False, None)
sdot_4x8_iadd_sat = _dot(8, True, True, "signed")
udot_4x8_uadd_sat = _dot(8, False, False, "unsigned")
sudot_4x8_iadd_sat = _dot(8, True, False, "signed")
sdot_2x16_iadd = _dot(16, True, True, None)
udot_2x16_uadd = _dot(16, False, False, None)
sdot_2x16_iadd_sat = _dot(16, True, True, "signed")
udot_2x16_uadd_sat = _dot(16, False, False, "unsigned")


def _low24(m, value, signed: bool):
    return resize(m, m.trunc(value, 32, 24), 24, 32, signed)


def _mul24(signed: bool, add: bool):
    def semantics(m, a, ws, w):
        product = m.mul(_low24(m, a[0], signed), _low24(m, a[1], signed), 32)
        return m.add(product, a[2], 32) if add else product

    return semantics


imul24 = _mul24(True, False)
umul24 = _mul24(False, False)
umad24 = _mul24(False, True)
imad24_ir3 = _mul24(True, True)


def _relaxed(signed: bool, add: bool, op: str):
    def semantics(m, a, ws, w):
        for value in a[:2]:
            m.undefined_if(m.negate(m.eq(_low24(m, value, signed), value, 32)),
                           f"{op} source outside the 24-bit range")
        product = m.mul(a[0], a[1], 32)
        return m.add(product, a[2], 32) if add else product

    return semantics


imul24_relaxed = _relaxed(True, False, "imul24_relaxed")
umul24_relaxed = _relaxed(False, False, "umul24_relaxed")
umad24_relaxed = _relaxed(False, True, "umad24_relaxed")


def umul_low(m, a, ws, w):
    low = m.const(mask(w // 2), w)
    return m.mul(m.and_(a[0], low, w), m.and_(a[1], low, w), w)


def imadsh_mix16(m, a, ws, w):
    high = m.shl(m.and_(a[0], m.const(0xFFFF, 32), 32), 16, 32)
    product = m.mul(high, m.and_(a[1], m.const(0xFFFF0000, 32), 32), 32)
    return m.add(m.ashr_var(product, m.const(16, 32), 32), a[2], 32)


def _csel(compare):
    def semantics(m, a, ws, w):
        return m.select(compare(m, a[0]), a[1], a[2], 32)

    return semantics


i32csel_gt = _csel(lambda m, x: m.slt(m.const(0, 32), x, 32))
i32csel_ge = _csel(lambda m, x: m.negate(m.slt(x, m.const(0, 32), 32)))


def ufind_msb_rev(m, a, ws, w):
    """The first `bit` (counting up) with ((src0 << bit) & 0x80000000) set, else -1."""
    result = m.const(mask(w), w)
    for bit in reversed(range(ws[0])):
        position = 31 - bit
        if 0 <= position < ws[0]:
            result = m.select(_bit(m, a[0], position, ws[0]), m.const(bit, w), result, w)
    return result


def ifind_msb_rev(m, a, ws, w):
    """The first bit from the top that differs from the sign bit, else -1."""
    result = m.const(mask(w), w)
    sign = _bit(m, a[0], 31, 32)
    for bit in reversed(range(32)):
        differs = m.negate(m.eq(m.select(_bit(m, a[0], 31 - bit, 32), m.const(1, 1),
                                         m.const(0, 1), 1),
                                m.select(sign, m.const(1, 1), m.const(0, 1), 1), 1))
        result = m.select(differs, m.const(bit, w), result, w)
    return result


def shfr(m, a, ws, w):
    joined = m.or_(m.zext(a[1], 32, 64), m.shl(m.zext(a[0], 32, 64), 32, 64), 64)
    amount = m.zext(m.and_(a[2], m.const(31, 32), 32), 32, 64)
    return m.trunc(m.lshr_var(joined, amount, 64), 64, 32)


def interleave_agx(m, a, ws, w):
    result = m.const(0, 32)
    for bit in range(16):
        for source, offset in ((a[0], bit), (a[1], bit + 1)):
            piece = m.zext(m.and_(source, m.const(1 << bit, 16), 16), 16, 32)
            result = m.or_(result, m.shl(piece, offset, 32) if offset else piece, 32)
    return result
