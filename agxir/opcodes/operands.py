"""Reading sources the AGX way, written once for every backend.

Integer sources: a narrow source is sign-extended to the working width unless it carries
`.abs`, which zero-extends it; `.neg` negates after extension. Integer immediates are 16-bit
values extended by the same rule. Float sources: a 16-bit source read by a 32-bit operation is
converted exactly; `.abs` clears and `.neg` then flips the sign bit, and a NaN is then read as
the canonical quiet NaN (every float result is canonical and every float compare ignores a
NaN's bits, so no float op can see a NaN's sign or payload: reading it canonical says so, and
lets a proof compare two reads of a float source bit for bit). Float immediates are 8-bit
AGX minifloats. Condition codes are evaluated here too.
"""

from __future__ import annotations

import struct

from agxir.ir import Immediate, Instruction

INT_CONDS = ("ueq", "ult", "ugt", "seq", "slt", "sgt")
FLOAT_CONDS = ("eq", "lt", "gt", "ltn", "ge", "le", "gtn")
SIGNED_INT_CONDS = frozenset({"seq", "slt", "sgt"})


def mask(width: int) -> int:
    return (1 << width) - 1


def sign_extend_int(value: int, from_width: int, to_width: int) -> int:
    value &= mask(from_width)
    if value >> (from_width - 1):
        value -= 1 << from_width
    return value & mask(to_width)


# --- 8-bit minifloats ---------------------------------------------------------------------


def minifloat_value(bits: int) -> float:
    """sign(1) exponent(3) mantissa(4): e != 0 gives (16+m) * 2**(e-7), e == 0 gives m * 2**-6."""
    sign = -1.0 if bits & 0x80 else 1.0
    exponent = (bits >> 4) & 7
    mantissa = bits & 0xF
    if exponent:
        return sign * (16 + mantissa) * 2.0 ** (exponent - 7)
    return sign * mantissa * 2.0**-6


def float_to_bits(value: float, fwidth: int) -> int:
    if fwidth == 32:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<H", struct.pack("<e", value))[0]


def bits_to_float(bits: int, fwidth: int) -> float:
    if fwidth == 32:
        return struct.unpack("<f", struct.pack("<I", bits & mask(32)))[0]
    return struct.unpack("<e", struct.pack("<H", bits & mask(16)))[0]


MINIFLOAT_BY_VALUE: dict[tuple[float, bool], int] = {}
for _bits in range(256):
    _v = minifloat_value(_bits)
    MINIFLOAT_BY_VALUE.setdefault((_v, str(_v).startswith("-")), _bits)


def minifloat_encode(value: float) -> int | None:
    """The 8-bit encoding of `value`, or None when it is not exactly representable."""
    return MINIFLOAT_BY_VALUE.get((value, str(value).startswith("-")))


# The quiet NaN every float result and float read is made into (the machines keep the same
# table for their own results).
CANONICAL_NAN = {16: 0x7E00, 32: 0x7FC00000}


def sign_bit(fwidth: int) -> int:
    return 1 << (fwidth - 1)


# --- operand readers ------------------------------------------------------------------------


def read_int(m, ins: Instruction, index: int, width: int):
    src = ins.srcs[index]
    if isinstance(src.ref, Immediate):
        value = src.ref.bits & mask(16)
        value = value if src.abs else sign_extend_int(value, 16, 64)
        value = (-value if src.neg else value) & mask(width)
        return m.const(value, width)
    raw = m.operand(index)
    size = src.ref.size
    if size < width:
        raw = m.zext(raw, size, width) if src.abs else m.sext(raw, size, width)
    elif size > width:
        raw = m.trunc(raw, size, width)
    if src.neg:
        raw = m.sub(m.const(0, width), raw, width)
    return raw


def read_raw(m, ins: Instruction, index: int, width: int | None = None):
    """Bits as they are; an immediate is zero-extended to `width`."""
    src = ins.srcs[index]
    if isinstance(src.ref, Immediate):
        return m.const(src.ref.bits, width or 16)
    return m.operand(index)


def read_float(m, ins: Instruction, index: int, fwidth: int):
    src = ins.srcs[index]
    if isinstance(src.ref, Immediate):
        bits = float_to_bits(minifloat_value(src.ref.bits), fwidth)
        if src.abs:
            bits &= ~sign_bit(fwidth)
        if src.neg:
            bits ^= sign_bit(fwidth)
        return m.const(bits & mask(fwidth), fwidth)
    raw = m.operand(index)
    if src.ref.size != fwidth:
        raw = m.fconvert(raw, src.ref.size, fwidth)
    if src.abs:
        raw = m.and_(raw, m.const(mask(fwidth) ^ sign_bit(fwidth), fwidth), fwidth)
    if src.neg:
        raw = m.xor(raw, m.const(sign_bit(fwidth), fwidth), fwidth)
    return m.select(m.fis_nan(raw, fwidth), m.const(CANONICAL_NAN[fwidth], fwidth), raw, fwidth)


def source_size(ins: Instruction, index: int) -> int:
    return ins.srcs[index].size


# --- conditions -----------------------------------------------------------------------------


def int_condition(m, cond: str, a, b, width: int):
    if cond in ("ueq", "seq"):
        return m.eq(a, b, width)
    if cond == "ult":
        return m.ult(a, b, width)
    if cond == "ugt":
        return m.ult(b, a, width)
    if cond == "slt":
        return m.slt(a, b, width)
    if cond == "sgt":
        return m.slt(b, a, width)
    raise ValueError(f"unknown integer condition {cond!r}")


def read_int_compare(m, ins: Instruction, cond: str):
    """Both compare sources at the wider of their widths, extended as the condition says:
    sign-extended for seq/slt/sgt, zero-extended for the unsigned conditions."""
    width = max(source_size(ins, 0), source_size(ins, 1))
    signed = cond in SIGNED_INT_CONDS
    values = []
    for index in (0, 1):
        src = ins.srcs[index]
        if isinstance(src.ref, Immediate):
            bits = src.ref.bits & mask(16)
            bits = sign_extend_int(bits, 16, width) if signed else bits
            values.append(m.const(bits, width))
            continue
        raw = m.operand(index)
        if src.ref.size < width:
            extend = m.sext if signed else m.zext
            raw = extend(raw, src.ref.size, width)
        values.append(raw)
    return int_condition(m, cond, values[0], values[1], width), width


def float_condition(m, cond: str, a, b, fwidth: int):
    """AGX float conditions; ltn/gtn are the NaN-loses compares used for fmin/fmax."""
    if cond == "eq":
        return m.feq(a, b, fwidth)
    if cond == "lt":
        return m.flt(a, b, fwidth)
    if cond == "gt":
        return m.flt(b, a, fwidth)
    if cond == "le":
        return m.fle(a, b, fwidth)
    if cond == "ge":
        return m.fle(b, a, fwidth)
    if cond == "ltn":
        return m.either(m.flt(a, b, fwidth), m.fis_nan(b, fwidth))
    if cond == "gtn":
        return m.either(m.flt(b, a, fwidth), m.fis_nan(b, fwidth))
    raise ValueError(f"unknown float condition {cond!r}")


def read_float_compare(m, ins: Instruction, cond: str):
    fwidth = max(source_size(ins, 0), source_size(ins, 1))
    a = read_float(m, ins, 0, fwidth)
    b = read_float(m, ins, 1, fwidth)
    return float_condition(m, cond, a, b, fwidth)


def inverted(m, truth, invert: int):
    return m.negate(truth) if invert else truth
