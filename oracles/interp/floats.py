"""Float and shift helpers the emitted interpreter code calls, over uint64 lane arrays.

Values travel as uint64 arrays of raw bits; these helpers view them as IEEE floats, compute
with numpy (whose float32/float16 arithmetic and casts round to nearest even), and return
raw bits with every NaN made canonical.
"""

from __future__ import annotations

import numpy as np

CANONICAL_NAN = {16: 0x7E00, 32: 0x7FC00000}
_UINT = {16: np.uint16, 32: np.uint32}
_FLOAT = {16: np.float16, 32: np.float32}


def f32(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32)


def f16(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint16).view(np.float16)


def _bits(values: np.ndarray, fw: int) -> np.ndarray:
    raw = values.view(_UINT[fw]).astype(np.uint64)
    return np.where(np.isnan(values), np.uint64(CANONICAL_NAN[fw]), raw)


def bits32(values: np.ndarray) -> np.ndarray:
    return _bits(values.astype(np.float32, copy=False), 32)


def bits16(values: np.ndarray) -> np.ndarray:
    return _bits(values.astype(np.float16, copy=False), 16)


def as_float(bits: np.ndarray, fw: int) -> np.ndarray:
    return bits.astype(_UINT[fw]).view(_FLOAT[fw])


# float64 keeps 53 - 24 = 29 bits below an f32 result's last place (42 below an f16's).
# Rounding the float64 sum again can only go wrong when it lies exactly on a midpoint of
# the target format: those bits read 100...0. Below the target's smallest normal the
# midpoints sit higher, so every nonzero tiny sum is treated as suspect.
_BELOW_TARGET = {32: np.uint64((1 << 29) - 1), 16: np.uint64((1 << 42) - 1)}
_MIDPOINT = {32: np.uint64(1 << 28), 16: np.uint64(1 << 41)}
_SMALLEST_NORMAL = {32: 2.0**-126, 16: 2.0**-14}


def ffma(a, b, c, fw: int) -> np.ndarray:
    """a * b + c rounded once. The product is exact in float64; where the float64 sum could
    round differently a second time, it is rounded to odd instead (53 >= target precision
    + 2 bits), so the final cast rounds correctly."""
    product = as_float(a, fw).astype(np.float64) * as_float(b, fw)
    z = as_float(c, fw)
    total = product + z
    midpoint = (total.view(np.uint64) & _BELOW_TARGET[fw]) == _MIDPOINT[fw]
    tiny = (np.abs(total) < _SMALLEST_NORMAL[fw]) & (total != 0)
    suspect = midpoint | tiny
    if suspect.any():
        total = _round_to_odd(product, z, total, suspect)
    return _bits(total.astype(_FLOAT[fw]), fw)


def _round_to_odd(product, z, total, suspect):
    # TwoSum: the exact rounding error of `total`.
    b_virtual = total - product
    error = (product - (total - b_virtual)) + (z - b_virtual)
    even = (total.view(np.uint64) & np.uint64(1)) == 0
    bump = suspect & (error != 0) & even & np.isfinite(total)
    if bump.any():
        total = np.where(bump, np.nextafter(total, np.copysign(np.inf, error)), total)
    return total


def fconvert(a, from_fw: int, to_fw: int) -> np.ndarray:
    return _bits(as_float(a, from_fw).astype(_FLOAT[to_fw]), to_fw)


def int_to_float(a, width: int, fw: int, signed: bool) -> np.ndarray:
    if signed:
        bit = np.uint64(1 << (width - 1))
        integers = ((a ^ bit) - bit).view(np.int64)
    elif width < 64:
        integers = a.view(np.int64)
    else:
        integers = a
    if fw == 32:
        return _bits(integers.astype(np.float32), 32)
    # Through float64: exact below 2**53, and anything larger is infinite in f16 anyway.
    return _bits(integers.astype(np.float64).astype(np.float16), 16)


def float_to_int(a, fw: int, width: int, signed: bool) -> np.ndarray:
    """Truncate toward zero; lanes out of range get garbage that the semantics select away."""
    truncated = np.trunc(as_float(a, fw).astype(np.float64))
    truncated = np.where(np.isfinite(truncated), truncated, 0.0)
    truncated = np.clip(truncated, -(2.0**63), 2.0**63 - 1)
    return truncated.astype(np.int64).view(np.uint64) & np.uint64((1 << width) - 1)


def ashr(a, amount, width: int) -> np.ndarray:
    bit = np.uint64(1 << (width - 1))
    signed = ((a ^ bit) - bit).view(np.int64)
    shifted = (signed >> amount.astype(np.int64)).view(np.uint64)
    return shifted if width == 64 else shifted & np.uint64((1 << width) - 1)


HELPERS = {
    "where": np.where,
    "isnan": np.isnan,
    "f32": f32,
    "f16": f16,
    "bits32": bits32,
    "bits16": bits16,
    "ffma": ffma,
    "fconvert": fconvert,
    "int_to_float": int_to_float,
    "float_to_int": float_to_int,
    "ashr": ashr,
}
