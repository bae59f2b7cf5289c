"""Semantics of the float opcodes (fadd, fmul, ffma, fmov) and of `convert`.

Arithmetic is IEEE binary32/binary16, round to nearest even, subnormals kept, NaN results
canonical. `.sat` clamps to [0, 1] with NaN and -0.0 becoming +0.0.
"""

from __future__ import annotations

from agxir.opcodes.operands import float_to_bits, mask, read_float, read_raw

CONVERT_MODES = ("u2f", "s2f", "f2u", "f2s", "f2f")


def _saturate(m, ins, result, fw: int):
    if not ins.sat:
        return result
    zero = m.const(0, fw)
    one = m.const(float_to_bits(1.0, fw), fw)
    low = m.either(m.fis_nan(result, fw), m.fle(result, zero, fw))
    clamped_high = m.select(m.fle(one, result, fw), one, result, fw)
    return m.select(low, zero, clamped_high, fw)


def fadd(m, ins):
    fw = ins.dest.size
    result = m.fadd(read_float(m, ins, 0, fw), read_float(m, ins, 1, fw), fw)
    return _saturate(m, ins, result, fw)


def fmul(m, ins):
    fw = ins.dest.size
    result = m.fmul(read_float(m, ins, 0, fw), read_float(m, ins, 1, fw), fw)
    return _saturate(m, ins, result, fw)


def ffma(m, ins):
    fw = ins.dest.size
    a, b, c = (read_float(m, ins, i, fw) for i in range(3))
    return _saturate(m, ins, m.ffma(a, b, c, fw), fw)


def fmov(m, ins):
    """`fmov x` is `fadd x, -0.0`, which is x itself for every non-NaN x (-0.0 + -0.0 is
    -0.0, +0.0 + -0.0 is +0.0 under round to nearest even) and the canonical NaN for a NaN:
    exactly the float read of x, which canonicalizes NaN. Written as the read, not as an
    addition, so proofs about moves need no floating-point adder."""
    fw = ins.dest.size
    return _saturate(m, ins, read_float(m, ins, 0, fw), fw)


def _float_to_int_saturating(m, x, fw: int, w: int, signed: bool):
    """Round toward zero; NaN gives 0; out-of-range values clamp to the integer range."""
    if signed:
        high, low = 2.0 ** (w - 1), -(2.0 ** (w - 1))
        high_result, low_result = mask(w - 1), 1 << (w - 1)
    else:
        high, low = 2.0**w, 0.0
        high_result, low_result = mask(w), 0
    high_bits = m.const(_power_of_two_bits(high, fw), fw)
    low_bits = m.const(_power_of_two_bits(low, fw), fw)
    converted = m.float_to_int(x, fw, w, signed)
    within = m.select(m.fle(x, low_bits, fw), m.const(low_result, w), converted, w)
    clamped = m.select(m.fle(high_bits, x, fw), m.const(high_result, w), within, w)
    return m.select(m.fis_nan(x, fw), m.const(0, w), clamped, w)


def _power_of_two_bits(value: float, fw: int) -> int:
    """A bound beyond the format's range becomes an infinity of the same sign."""
    try:
        return float_to_bits(value, fw)
    except OverflowError:
        return float_to_bits(float("inf") if value > 0 else float("-inf"), fw)


def convert(m, ins):
    mode = ins.attrs["mode"]
    w = ins.dest.size
    src_width = ins.srcs[0].size
    raw = read_raw(m, ins, 0, src_width)
    if mode in ("u2f", "s2f"):
        return m.int_to_float(raw, src_width, w, signed=mode == "s2f")
    if mode in ("f2u", "f2s"):
        return _float_to_int_saturating(m, raw, src_width, w, signed=mode == "f2s")
    return m.fconvert(raw, src_width, w)
