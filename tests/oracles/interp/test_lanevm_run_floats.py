"""The lane VM's float ops (lanevm_src/floats.h, run by run.c) bit for bit against
oracles/interp/floats.py run by numpy, the reference: every half pattern for the unary ops,
a million random pairs plus the cross product of special values for the binary ones (both
widths), conversions around every rounding boundary, and ffma cases built to take
floats.ffma's round-to-odd path. Lanes carry random bits above the float's width, which
every op must ignore. Seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracles.interp import floats, lanevm
from tests.oracles.interp.test_lanevm_run import program

U64 = np.uint64
PAIRS = 1_000_000

SPECIAL16 = [
    0x0000, 0x8000, 0x7C00, 0xFC00,  # zeros, infinities
    0x7E00, 0x7C01, 0x7DFF, 0x7FFF, 0xFE00, 0xFC01, 0xFFFF,  # NaNs, several payloads
    0x0001, 0x8001, 0x0002, 0x0200, 0x03FF, 0x83FF,  # subnormals
    0x0400, 0x8400, 0x0401, 0x7BFF, 0xFBFF, 0x7BFE,  # smallest and largest normals
    0x3C00, 0xBC00, 0x3C01, 0x3BFF, 0x4000, 0xC000, 0x3800, 0x3E00, 0x4100, 0x3555,
    0x1400, 0x1000, 0x5BFF, 0x6400, 0x7800, 0x7A00, 0x0800, 0x2400,
]
SPECIAL32 = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
    0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFC00000, 0xFF800001,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,
    0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800001,
    0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x3F000000, 0x3FC00000, 0x40200000,
    0x4B000001, 0x4B800001, 0x33800000, 0x33000000, 0x33000001, 0x32FFFFFF,  # 2**-24, -25
    0x38800000, 0x387FFFFF, 0x38000000, 0x477FE000, 0x477FF000, 0x477FEFFF, 0x477FF001,
    0x5F000000, 0xDF000000, 0x5F800000, 0x5EFFFFFF, 0xDF000001, 0x3EAAAAAB,
]
WIDTHS = [1, 8, 16, 31, 32, 33, 63, 64]


def rng_for(*key) -> np.random.Generator:
    return np.random.default_rng([0x1A7E, *key])


def with_high_garbage(bits: np.ndarray, fw: int, rng) -> np.ndarray:
    """The float's bits in the low fw bits of each lane, random bits above them."""
    high = rng.integers(0, 2**64, bits.size, U64, endpoint=False) >> U64(fw) << U64(fw)
    return bits.astype(U64) | high


def cross(values) -> tuple[np.ndarray, np.ndarray]:
    grid = np.meshgrid(np.array(values, U64), np.array(values, U64))
    return grid[0].ravel(), grid[1].ravel()


def pairs(fw: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """The specials' cross product, random patterns, and random values near each other
    (their sums cancel and round), all with garbage above the float."""
    a0, b0 = cross(SPECIAL16 if fw == 16 else SPECIAL32)
    size = PAIRS // 2
    a1, b1 = (rng.integers(0, 2**fw, size, U64) for _ in range(2))
    a2 = rng.integers(0, 2**fw, size, U64)
    b2 = (a2 ^ rng.integers(0, 2**(fw - 6), size, U64)) ^ (rng.integers(0, 2, size, U64)
                                                           << U64(fw - 1))
    a = np.concatenate([a0, a1, a2])
    b = np.concatenate([b0, b1, b2])
    return with_high_garbage(a, fw, rng), with_high_garbage(b, fw, rng)


def run_op(name, a, b=None, c=None, imm=0) -> np.ndarray:
    rows = np.zeros((4, a.size), U64)
    rows[0] = a
    if b is not None:
        rows[1] = b
    if c is not None:
        rows[2] = c
    assert lanevm.run(program((name, 3, 0, 1, 2, imm)), rows, 0, True) == -1
    return rows[3]


def assert_same_bits(got: np.ndarray, want: np.ndarray, *inputs):
    wrong = np.flatnonzero(got != want)
    if wrong.size:
        i = wrong[0]
        shown = ", ".join(hex(int(x[i])) for x in inputs)
        raise AssertionError(f"{wrong.size} lanes differ; first: inputs {shown}: vm "
                             f"{int(got[i]):#x}, numpy {int(want[i]):#x}")


def as_float(bits, fw):
    return floats.as_float(bits, fw)


BINARY = {
    "FADD": lambda a, b, fw: floats._bits(as_float(a, fw) + as_float(b, fw), fw),
    "FMUL": lambda a, b, fw: floats._bits(as_float(a, fw) * as_float(b, fw), fw),
    "FEQ": lambda a, b, fw: (as_float(a, fw) == as_float(b, fw)).astype(U64),
    "FLT": lambda a, b, fw: (as_float(a, fw) < as_float(b, fw)).astype(U64),
    "FLE": lambda a, b, fw: (as_float(a, fw) <= as_float(b, fw)).astype(U64),
}


@pytest.mark.parametrize("fw", [16, 32])
@pytest.mark.parametrize("name", BINARY)
def test_binary_float_op(name, fw):
    a, b = pairs(fw, rng_for(fw, len(name), ord(name[1])))
    with np.errstate(all="ignore"):
        want = BINARY[name](a, b, fw)
    assert_same_bits(run_op(name, a, b, imm=fw), want, a, b)


def test_the_emitted_spelling_is_what_the_reference_computes():
    # The emitters write bits16(f16(a) + f16(b)); BINARY uses floats._bits on the sum.
    a, b = pairs(16, rng_for(7))
    with np.errstate(all="ignore"):
        assert np.array_equal(floats.bits16(floats.f16(a) + floats.f16(b)),
                              BINARY["FADD"](a, b, 16))
        assert np.array_equal(floats.bits32(floats.f32(a) * floats.f32(b)),
                              BINARY["FMUL"](a, b, 32))


def every_half(rng) -> np.ndarray:
    return with_high_garbage(np.arange(2**16, dtype=U64), 16, rng)


def f32_patterns(rng) -> np.ndarray:
    """Specials, uniform patterns, and patterns whose exponent lies around the half range
    (2**-27 .. 2**18), with mantissas on and next to each half rounding boundary."""
    size = PAIRS // 4
    uniform = rng.integers(0, 2**32, size, U64)
    exponent = rng.integers(100, 146, size, U64) << U64(23)
    sign = rng.integers(0, 2, size, U64) << U64(31)
    mantissa = rng.integers(0, 2**23, size, U64)
    near_half = sign | exponent | mantissa
    boundary = mantissa & ~U64(0x1FFF) | np.array([0x1000, 0xFFF, 0x1001, 0], U64)[
        rng.integers(0, 4, size)]
    on_boundary = sign | exponent | boundary
    tiny_boundary = sign | exponent | (mantissa >> rng.integers(0, 23, size).astype(U64))
    bits = np.concatenate([np.array(SPECIAL32, U64), uniform, near_half, on_boundary,
                           tiny_boundary])
    return with_high_garbage(bits, 32, rng)


@pytest.mark.parametrize("fw", [16, 32])
def test_isnan(fw):
    a = every_half(rng_for(1)) if fw == 16 else f32_patterns(rng_for(1))
    want = np.isnan(as_float(a, fw)).astype(U64)
    assert_same_bits(run_op("FISNAN", a, imm=fw), want, a)


@pytest.mark.parametrize("to_fw", [16, 32])
@pytest.mark.parametrize("from_fw", [16, 32])
def test_fconvert(from_fw, to_fw):
    a = every_half(rng_for(2)) if from_fw == 16 else f32_patterns(rng_for(2))
    with np.errstate(all="ignore"):
        want = floats.fconvert(a, from_fw, to_fw)
    assert_same_bits(run_op("FCONVERT", a, imm=from_fw | to_fw << 8), want, a)


def integers(width: int, rng) -> np.ndarray:
    """Lanes of `width` bits (as the interpreters keep them): every pattern near a power
    of two, and where rounding to float32 or through float64 ties; random otherwise."""
    size = PAIRS // 8
    powers = [1 << k for k in range(64)]
    near = [p + delta for p in powers for delta in (-2, -1, 0, 1, 2)]
    # Ties of float32 (24 bits) and float64 (53 bits): even, odd, and just above.
    ties = [(1 << k) | odd | (1 << (k - 24)) | extra for k in range(25, 64)
            for odd in (0, 1 << (k - 23)) for extra in (0, 1 << (k - 25), 1)]
    ties += [(1 << k) | odd | (1 << (k - 53)) | extra for k in range(54, 64)
             for odd in (0, 1 << (k - 52)) for extra in (0, 1)]
    ties += [(1 << 16) - 16 + d for d in range(-40, 40)]  # 65504 .. 65520 .. f16 infinity
    chosen = np.array([v % 2**64 for v in near + ties], U64)
    chosen = np.concatenate([chosen, U64(0) - chosen, rng.integers(0, 2**64, size, U64,
                                                                   endpoint=False)])
    return chosen if width == 64 else chosen & U64((1 << width) - 1)


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("fw", [16, 32])
@pytest.mark.parametrize("width", WIDTHS)
def test_int_to_float(width, fw, signed):
    a = integers(width, rng_for(3, width))
    want = floats.int_to_float(a, width, fw, signed)
    got = run_op("I2F", a, imm=width | fw << 8 | int(signed) << 16)
    assert_same_bits(got, want, a)


def test_int_to_float_of_garbage_above_the_width():
    # Not what the interpreters keep, but the VM still matches floats.py bit for bit.
    a = rng_for(4).integers(0, 2**64, PAIRS // 8, U64, endpoint=False)
    for width in WIDTHS:
        for fw in (16, 32):
            for signed in (False, True):
                want = floats.int_to_float(a, width, fw, signed)
                got = run_op("I2F", a, imm=width | fw << 8 | int(signed) << 16)
                assert_same_bits(got, want, a)


@pytest.mark.parametrize("fw", [16, 32])
@pytest.mark.parametrize("width", WIDTHS)
def test_float_to_int(fw, width):
    a = every_half(rng_for(5)) if fw == 16 else f32_patterns(rng_for(5))
    for signed in (False, True):  # floats.float_to_int ignores it; so must the VM
        with np.errstate(all="ignore"):
            want = floats.float_to_int(a, fw, width, signed)
        got = run_op("F2I", a, imm=fw | width << 8 | int(signed) << 16)
        assert_same_bits(got, want, a)


def test_float_to_int_out_of_range_is_numpys_x86_value():
    # 2**63 and beyond clip to 2.0**63, which numpy's astype(int64) turns into
    # 0x8000000000000000 on x86-64, as cvttsd2si does; the VM writes that value out.
    big = np.array([0x5F000000, 0x5F800000, 0x7F7FFFFF, 0xDF000000, 0xFF7FFFFF], U64)
    with np.errstate(all="ignore"):
        assert floats.float_to_int(big, 32, 64, True).tolist() == [2**63] * 5
    assert run_op("F2I", big, imm=32 | 64 << 8).tolist() == [2**63] * 5
    assert run_op("F2I", big, imm=32 | 63 << 8).tolist() == [0] * 5


def ffma_paths(a, b, c, fw):
    """How many lanes floats.ffma finds suspect, how many of those it bumps (rounds to odd),
    and how many bumped lanes only the tiny test caught: its own steps, restated."""
    product = as_float(a, fw).astype(np.float64) * as_float(b, fw)
    z = as_float(c, fw)
    total = product + z
    midpoint = (total.view(U64) & floats._BELOW_TARGET[fw]) == floats._MIDPOINT[fw]
    tiny = (np.abs(total) < floats._SMALLEST_NORMAL[fw]) & (total != 0)
    suspect = midpoint | tiny
    b_virtual = total - product
    error = (product - (total - b_virtual)) + (z - b_virtual)
    even = (total.view(U64) & U64(1)) == 0
    bump = suspect & (error != 0) & even & np.isfinite(total)
    return int(suspect.sum()), int(bump.sum()), int((bump & ~midpoint).sum())


def ffma_round_to_odd_cases(fw: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Triples whose float64 sum floats.ffma must round to odd: a * b exactly on a midpoint
    of the format ((1 + 2**-k)(1 + 2**-m), k + m one past its precision, scaled) with a
    small addend that makes the sum inexact (for f32); tiny products; products just off a
    subnormal midpoint (f32); and random triples."""
    size = PAIRS // 4
    mant = 23 if fw == 32 else 10
    k = rng.integers(1, mant + 1, size)
    m = mant + 1 - k
    scale_a = rng.integers(-20, 21, size)
    scale_b = rng.integers(-20, 21, size)
    x = (1 + 2.0 ** -k) * 2.0 ** scale_a
    y = (1 + 2.0 ** -m) * 2.0 ** scale_b
    x = np.where(rng.integers(0, 2, size) == 1, -x, x)
    if fw == 32:
        addend = (2.0 ** (scale_a + scale_b - rng.integers(30, 60, size))
                  * rng.choice([-1.0, 1.0, -1.5, 3.0], size))
        tiny_x = rng.uniform(1, 2, size) * 2.0 ** rng.integers(-80, -60, size)
        tiny_y = rng.uniform(1, 2, size) * 2.0 ** rng.integers(-80, -60, size)
    else:
        addend = 2.0 ** (scale_a + scale_b - rng.integers(8, 14, size)) * rng.choice(
            [-1.0, 1.0, 0.0], size)
        tiny_x = rng.uniform(1, 2, size) * 2.0 ** rng.integers(-12, -6, size)
        tiny_y = rng.uniform(1, 2, size) * 2.0 ** rng.integers(-12, -4, size)
    dtype = np.float32 if fw == 32 else np.float16
    uint = np.uint32 if fw == 32 else np.uint16

    def bits(values):
        with np.errstate(all="ignore"):
            return values.astype(dtype).view(uint).astype(U64)

    tiny_c = bits(rng.uniform(-1, 1, size) * np.abs(tiny_x * tiny_y))
    # f32 only: a product 2**-150 - 2**-196 ((1 + 2**-23)(1 - 2**-23), scaled) plus a
    # subnormal addend: the float64 sum rounds onto a midpoint of the subnormal grid, and
    # only the tiny test sends it to round-to-odd.
    shift = rng.integers(-20, 21, size)
    low_x = (1 + 2.0**-23) * 2.0 ** (-75 + shift)
    low_y = (1 - 2.0**-23) * 2.0 ** (-75 - shift) * rng.choice([-1.0, 1.0], size)
    low_c = rng.integers(0, 2**23, size, U64) | (rng.integers(0, 2, size, U64) << U64(31))
    a = np.concatenate([bits(x), bits(tiny_x), rng.integers(0, 2**fw, size, U64)])
    b = np.concatenate([bits(y), bits(tiny_y), rng.integers(0, 2**fw, size, U64)])
    c = np.concatenate([bits(addend), tiny_c, rng.integers(0, 2**fw, size, U64)])
    if fw == 32:
        a, b, c = (np.concatenate([v, w]) for v, w in ((a, bits(low_x)), (b, bits(low_y)),
                                                       (c, low_c)))
    return tuple(with_high_garbage(v, fw, rng) for v in (a, b, c))


@pytest.mark.parametrize("fw", [16, 32])
def test_ffma_with_the_round_to_odd_path(fw):
    a, b, c = ffma_round_to_odd_cases(fw, rng_for(6, fw))
    with np.errstate(all="ignore"):
        suspect, bumped, bumped_tiny = ffma_paths(a, b, c, fw)
        want = floats.ffma(a, b, c, fw)
    assert suspect > 10_000
    if fw == 32:  # f16 products and addends never make an inexact finite float64 sum
        assert bumped > 10_000 and bumped_tiny > 10_000
    assert_same_bits(run_op("FFMA", a, b, c, imm=fw), want, a, b, c)


@pytest.mark.parametrize("fw", [16, 32])
def test_ffma_of_specials_cubed(fw):
    special = np.array(SPECIAL16 if fw == 16 else SPECIAL32, U64)
    a, b, c = (g.ravel() for g in np.meshgrid(special, special, special))
    with np.errstate(all="ignore"):
        want = floats.ffma(a, b, c, fw)
    assert_same_bits(run_op("FFMA", a, b, c, imm=fw), want, a, b, c)


def test_float_ops_accept_their_operand_as_destination():
    a, b = pairs(32, rng_for(8))
    a, b = a[:5000], b[:5000]
    c = a ^ b
    with np.errstate(all="ignore"):
        want = floats.ffma(a, b, c, 32)
    rows = np.stack([a, b, c])
    assert lanevm.run(program(("FFMA", 2, 0, 1, 2, 32)), rows, 0, True) == -1
    assert_same_bits(rows[2], want, a, b, c)
