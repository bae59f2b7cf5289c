"""The interpreter's float helpers against exact rational arithmetic.

ffma is the delicate one: it must round a*b + c once. Cases are built to land exactly on,
and just beside, rounding midpoints of the target format, and in its subnormal range.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from oracles.interp.floats import fconvert, ffma

FORMATS = {32: (24, -126, 128, "<f", "<I"), 16: (11, -14, 16, "<e", "<H")}


def decode(bits: int, fw: int) -> float:
    _, _, _, ffmt, ifmt = FORMATS[fw]
    return struct.unpack(ffmt, struct.pack(ifmt, bits))[0]


def encode(value: float, fw: int) -> int:
    _, _, _, ffmt, ifmt = FORMATS[fw]
    return struct.unpack(ifmt, struct.pack(ffmt, value))[0]


def round_exact(x: Fraction, fw: int) -> float:
    """x rounded to the nearest value of the format, ties to even, subnormals kept."""
    precision, min_exp, max_exp, _, _ = FORMATS[fw]
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    x = abs(x)
    exponent = math.floor(math.log2(x.numerator) - math.log2(x.denominator))
    while Fraction(2) ** exponent > x:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= x:
        exponent += 1
    exponent = max(exponent, min_exp)  # subnormals share the smallest exponent
    quantum = Fraction(2) ** (exponent - precision + 1)
    scaled = x / quantum
    q, remainder = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * remainder
    if twice > scaled.denominator or (twice == scaled.denominator and q % 2 == 1):
        q += 1
    value = q * quantum
    if value >= Fraction(2) ** max_exp:
        return sign * math.inf
    return sign * float(value)


def reference_fma(a: int, b: int, c: int, fw: int) -> int:
    x, y, z = (decode(v, fw) for v in (a, b, c))
    if any(math.isnan(v) or math.isinf(v) for v in (x, y, z)):
        result = np.float64(x) * np.float64(y) + np.float64(z)  # specials: IEEE rules
        if math.isnan(result):
            return {32: 0x7FC00000, 16: 0x7E00}[fw]
        return encode(float(result), fw)
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        # IEEE: a zero sum of two zeros is -0 only when both are negative; any other exact
        # cancellation gives +0 when rounding to nearest.
        product_negative = math.copysign(1, x) * math.copysign(1, y) < 0
        if (x == 0 or y == 0) and z == 0:
            return encode(-0.0 if (product_negative and math.copysign(1, z) < 0) else 0.0, fw)
        return encode(0.0, fw)
    return encode(round_exact(exact, fw), fw)


def interpreter_fma(a: int, b: int, c: int, fw: int) -> int:
    with np.errstate(all="ignore"):
        out = ffma(*(np.array([v], dtype=np.uint64) for v in (a, b, c)), fw)
    return int(out[0])


@st.composite
def near_midpoints(draw, fw: int):
    """c a random value and a*b half an ulp of c times (1 + e), where e is either a short
    nudge or the long tail of (1 + 2^-(p-1)) * (1 - 2^-(p-1)) = 1 - 2^-2(p-1): that tail
    falls below float64's precision, so a float64 sum lands exactly on the midpoint and a
    second rounding goes the wrong way unless the first one was done right."""
    precision, min_exp, max_exp, _, _ = FORMATS[fw]
    exponent = draw(st.integers(min_exp + precision, max_exp - 2))
    mantissa = draw(st.integers(1 << (precision - 1), (1 << precision) - 1))
    c_value = math.ldexp(mantissa, exponent - precision + 1) * draw(st.sampled_from([1, -1]))
    half_ulp = math.ldexp(1, exponent - precision)
    step = math.ldexp(1, -(precision - 1))
    a_factor = draw(st.sampled_from([1.0, 1 + step, 1 - step / 2, 1 + 2 * step]))
    b_factor = draw(st.sampled_from([1.0, 1 - step, 1 + step, 1 - step / 2, 0.5, 2.0]))
    sign = draw(st.sampled_from([1, -1]))
    a_value = round_exact(Fraction(half_ulp) * Fraction(a_factor), fw)
    b_value = sign * b_factor
    return [encode(v, fw) for v in (a_value, b_value, c_value)]


@given(st.sampled_from([32, 16]).flatmap(lambda fw: st.tuples(st.just(fw), near_midpoints(fw))))
def test_ffma_rounds_once_near_midpoints(case):
    fw, (a, b, c) = case
    assert interpreter_fma(a, b, c, fw) == reference_fma(a, b, c, fw)


@given(
    st.sampled_from([32, 16]),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
)
def test_ffma_on_any_bits(fw, a, b, c):
    mask = (1 << fw) - 1
    a, b, c = a & mask, b & mask, c & mask
    assert interpreter_fma(a, b, c, fw) == reference_fma(a, b, c, fw)


@given(st.integers(0, 2**10), st.integers(0, 2**10), st.sampled_from([1, -1]))
def test_ffma_with_subnormal_results(m1, m2, sign):
    a = encode(math.ldexp(m1 or 1, -140) * sign, 32)
    b = encode(math.ldexp(m2 or 1, -20), 32)
    c = encode(math.ldexp(3, -149), 32)
    assert interpreter_fma(a, b, c, 32) == reference_fma(a, b, c, 32)


@given(st.integers(0, 2**32 - 1))
def test_f32_to_f16_rounds_to_nearest_even(bits):
    value = decode(bits, 32)
    with np.errstate(all="ignore"):
        got = int(fconvert(np.array([bits], dtype=np.uint64), 32, 16)[0])
    if math.isnan(value):
        assert got == 0x7E00
    elif math.isinf(value) or value == 0:  # a Fraction would lose the sign of zero
        assert got == encode(value, 16)
    else:
        assert got == encode(round_exact(Fraction(value), 16), 16)
