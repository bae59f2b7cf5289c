"""Semantics of the NIR float opcodes that `BitVectors`'s IEEE operations can express.

Only f16 and f32 have machine semantics (the backends have no f64); any other width raises
`Unsupported`, which the prover reports naming the opcode and width, never as verified.
Results follow the machine's conventions: round to nearest even, subnormals kept, every NaN
result the canonical quiet NaN (NIR leaves NaN payloads unspecified). Float-to-integer
conversions out of range (or of NaN) are undefined values, as in C.
"""

from __future__ import annotations

import math
import struct

from agxir.nir.integer_ops import bool_bits, mask, truth

FLOAT_WIDTHS = (16, 32)


class Unsupported(Exception):
    """An opcode, or a size of one, that has no semantics here."""


def float_bits(value: float, fwidth: int) -> int:
    """IEEE bits of a Python float at 16, 32 or 64 bits (values too large round to inf)."""
    formats = {16: ("<e", "<H"), 32: ("<f", "<I"), 64: ("<d", "<Q")}
    if fwidth not in formats:
        raise Unsupported(f"a float constant at {fwidth} bits")
    pack, unpack = formats[fwidth]
    try:
        return struct.unpack(unpack, struct.pack(pack, value))[0]
    except OverflowError:
        return struct.unpack(unpack, struct.pack(pack, math.copysign(math.inf, value)))[0]


def _need(op: str, *widths: int) -> None:
    for width in widths:
        if width not in FLOAT_WIDTHS:
            raise Unsupported(f"{op} at {width} bits (no f{width} semantics)")


def _sign(fwidth: int) -> int:
    return 1 << (fwidth - 1)


def fneg(m, a, ws, w):
    _need("fneg", w)
    return m.xor(a[0], m.const(_sign(w), w), w)


def fabs(m, a, ws, w):
    _need("fabs", w)
    return m.and_(a[0], m.const(mask(w) ^ _sign(w), w), w)


def fadd(m, a, ws, w):
    _need("fadd", w)
    return m.fadd(a[0], a[1], w)


def fsub(m, a, ws, w):
    _need("fsub", w)
    return m.fadd(a[0], fneg(m, a[1:], ws[1:], w), w)


def fmul(m, a, ws, w):
    _need("fmul", w)
    return m.fmul(a[0], a[1], w)


def ffma(m, a, ws, w):
    _need("ffma", w)
    return m.ffma(a[0], a[1], a[2], w)


def _unordered(m, a, fw):
    return m.either(m.fis_nan(a[0], fw), m.fis_nan(a[1], fw))


def _float_compare(name, test):
    def semantics(m, a, ws, w):
        _need(name, ws[0])
        return bool_bits(m, test(m, a[0], a[1], ws[0], a), w)

    return semantics


flt = _float_compare("flt", lambda m, x, y, fw, a: m.flt(x, y, fw))
fge = _float_compare("fge", lambda m, x, y, fw, a: m.fle(y, x, fw))
feq = _float_compare("feq", lambda m, x, y, fw, a: m.feq(x, y, fw))
fneu = _float_compare("fneu", lambda m, x, y, fw, a: m.negate(m.feq(x, y, fw)))
fltu = _float_compare("fltu", lambda m, x, y, fw, a: m.either(_unordered(m, a, fw), m.flt(x, y, fw)))
fgeu = _float_compare("fgeu", lambda m, x, y, fw, a: m.either(_unordered(m, a, fw), m.fle(y, x, fw)))
fequ = _float_compare("fequ", lambda m, x, y, fw, a: m.either(_unordered(m, a, fw), m.feq(x, y, fw)))
fneo = _float_compare(
    "fneo", lambda m, x, y, fw, a: m.both(m.negate(_unordered(m, a, fw)), m.negate(m.feq(x, y, fw))))
funord = _float_compare("funord", lambda m, x, y, fw, a: _unordered(m, a, fw))
ford = _float_compare("ford", lambda m, x, y, fw, a: m.negate(_unordered(m, a, fw)))


def b2f(m, a, ws, w):
    """Bit-level: 1.0 or +0.0 of the destination's format (any width, f64 included)."""
    one = m.const(float_bits(1.0, w), w)
    return m.select(truth(m, a[0], ws[0]), one, m.const(0, w), w)


def f2b(m, a, ws, w):
    _need("f2b", ws[0])
    return bool_bits(m, m.negate(m.feq(a[0], m.const(0, ws[0]), ws[0])), w)


def _int_to_float(signed: bool):
    def semantics(m, a, ws, w):
        _need("i2f" if signed else "u2f", w)
        return m.int_to_float(a[0], ws[0], w, signed)

    return semantics


i2f = _int_to_float(True)
u2f = _int_to_float(False)


def f2f(m, a, ws, w):
    _need("f2f", ws[0], w)
    return a[0] if ws[0] == w else m.fconvert(a[0], ws[0], w)


def _float_to_int(signed: bool):
    def semantics(m, a, ws, w):
        fw = ws[0]
        _need("f2i" if signed else "f2u", fw)
        low = -(2.0 ** (w - 1)) - 1.0 if signed else -1.0
        high = 2.0 ** (w - 1) if signed else 2.0**w
        above_low = m.flt(m.const(float_bits(low, fw), fw), a[0], fw)
        below_high = m.flt(a[0], m.const(float_bits(high, fw), fw), fw)
        if float_bits(low, fw) == float_bits(low + 1.0, fw):  # the bound rounded: be exact
            above_low = m.fle(m.const(float_bits(low + 1.0, fw), fw), a[0], fw)
        m.undefined_if(m.negate(m.both(above_low, below_high)),
                       f"{'f2i' if signed else 'f2u'}{w} of a value out of range or NaN")
        return m.float_to_int(a[0], fw, w, signed)

    return semantics


f2i = _float_to_int(True)
f2u = _float_to_int(False)


def pack_half_2x16_split(m, a, ws, w):
    low = m.zext(m.fconvert(a[0], 32, 16), 16, 32)
    high = m.zext(m.fconvert(a[1], 32, 16), 16, 32)
    return m.or_(low, m.shl(high, 16, 32), 32)


def _unpack_half(high: bool):
    def semantics(m, a, ws, w):
        half = m.lshr(a[0], 16, 32) if high else a[0]
        return m.fconvert(m.trunc(half, 32, 16), 16, 32)

    return semantics


unpack_half_2x16_split_x = _unpack_half(False)
unpack_half_2x16_split_y = _unpack_half(True)
