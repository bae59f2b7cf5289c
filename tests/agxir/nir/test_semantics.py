"""NIR opcode semantics on the concrete machine against plain-Python references of NIR's
constant expressions (nir_opcodes.py), on random and edge inputs at every size."""

from __future__ import annotations

import random

import pytest

from agxir.nir.evaluate import Tracking
from agxir.nir.ops import NIR_OPS
from agxir.rewrite.concrete import ConcreteBitVectors

SIZES = (8, 16, 32, 64)
SAMPLES = 150


def mask(w):
    return (1 << w) - 1


def signed(v, w):
    v &= mask(w)
    return v - (1 << w) if v >> (w - 1) else v


def values(rng, w, n):
    edges = [0, 1, 2, mask(w), mask(w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1, w, w - 1]
    return [rng.choice(edges) if rng.random() < 0.3 else rng.getrandbits(w) for _ in range(n)]


def run(name, args, ws, w):
    m = Tracking(ConcreteBitVectors())
    result = NIR_OPS[name].semantics(m, list(args), list(ws), w)
    return result, any(cond for _, cond in m.raised)


def c_div(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


REFERENCES = {
    "ishl": lambda x, y, w: x << (y & (w - 1)),
    "ishr": lambda x, y, w: signed(x, w) >> (y & (w - 1)),
    "ushr": lambda x, y, w: x >> (y & (w - 1)),
    "urol": lambda x, y, w: (x << (y % w)) | (x >> ((-y) % w)),
    "udiv": lambda x, y, w: 0 if y == 0 else x // y,
    "umod": lambda x, y, w: 0 if y == 0 else x % y,
    "idiv": lambda x, y, w: 0 if y == 0 else c_div(signed(x, w), signed(y, w)),
    "irem": lambda x, y, w: 0 if y == 0 else signed(x, w) - c_div(signed(x, w), signed(y, w)) * signed(y, w),
    "imod": lambda x, y, w: 0 if y == 0 else signed(x, w) % signed(y, w) if signed(y, w) > 0
    else -((-signed(x, w)) % -signed(y, w)),
    "uadd_sat": lambda x, y, w: min(x + y, mask(w)),
    "usub_sat": lambda x, y, w: max(x - y, 0),
    "iadd_sat": lambda x, y, w: max(min(signed(x, w) + signed(y, w), (1 << (w - 1)) - 1), -(1 << (w - 1))),
    "isub_sat": lambda x, y, w: max(min(signed(x, w) - signed(y, w), (1 << (w - 1)) - 1), -(1 << (w - 1))),
    "umul_high": lambda x, y, w: (x * y) >> w,
    "imul_high": lambda x, y, w: (signed(x, w) * signed(y, w)) >> w,
    "uhadd": lambda x, y, w: (x + y) >> 1,
    "irhadd": lambda x, y, w: (signed(x, w) + signed(y, w) + 1) >> 1,
    "imin": lambda x, y, w: min(signed(x, w), signed(y, w)),
    "umax": lambda x, y, w: max(x, y),
    "extract_u8": lambda x, y, w: (x >> (8 * y)) & 0xFF,
    "extract_i16": lambda x, y, w: signed(x >> (16 * y), min(16, w)),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_binary_integer_ops_match_their_constant_expressions(name):
    rng = random.Random(name)
    for w in SIZES:
        for x, y in zip(values(rng, w, SAMPLES), values(rng, w, SAMPLES), strict=True):
            if name.startswith(("extract", "insert")):
                y %= max(w // (8 if name.endswith("8") else 16), 1)
            ws = [w, 32] if name in ("ishl", "ishr", "ushr", "urol") else [w, w]
            if ws[1] == 32:
                y &= mask(32)
            got, undefined = run(name, (x, y), ws, w)
            if name == "idiv" and signed(x, w) == -(1 << (w - 1)) and signed(y, w) == -1:
                assert undefined  # INT_MIN / -1 is C undefined behaviour
                continue
            assert not undefined
            assert got == REFERENCES[name](x, y, w) & mask(w), (name, w, x, y)


def test_counting_ops():
    rng = random.Random(7)
    for w in SIZES:
        for x in values(rng, w, SAMPLES):
            assert run("bit_count", [x], [w], 32)[0] == bin(x).count("1")
            lsb = (x & -x).bit_length() - 1 if x else -1
            assert run("find_lsb", [x], [w], 32)[0] == lsb & mask(32)
            assert run("ufind_msb", [x], [w], 32)[0] == (x.bit_length() - 1) & mask(32)
    for x in values(rng, 32, SAMPLES):
        assert run("uclz", [x], [32], 32)[0] == 32 - x.bit_length()
        assert run("bitfield_reverse", [x], [32], 32)[0] == int(f"{x:032b}"[::-1], 2)
        flipped = ~x & mask(32) if x >> 31 else x
        assert run("ifind_msb", [x], [32], 32)[0] == (flipped.bit_length() - 1) & mask(32)


def test_glsl_bitfield_ops_in_range_and_undefined_outside():
    rng = random.Random(3)
    for base in values(rng, 32, 60):
        for offset in range(0, 33, 3):
            for bits in range(0, 33, 5):
                got, undefined = run("ubitfield_extract", [base, offset, bits], [32] * 3, 32)
                if bits and offset + bits > 32:
                    assert undefined
                    continue
                assert not undefined
                assert got == (base >> offset) & mask(bits) if bits else got == 0
                got, _ = run("ibitfield_extract", [base, offset, bits], [32] * 3, 32)
                expected = signed(base >> offset, bits) & mask(32) if bits else 0
                assert got == expected
    assert run("ubitfield_extract", [5, mask(32), 4], [32] * 3, 32)[1]  # offset -1


def test_sm5_and_insert_ops():
    rng = random.Random(5)
    for base, insert, field in zip(*(values(rng, 32, SAMPLES) for _ in range(3)), strict=True):
        offset, bits = field & 31, (field >> 5) & 31
        got = run("ubfe", [base, field, field >> 5], [32] * 3, 32)[0]
        if bits == 0:
            assert got == 0
        else:
            assert got == (base >> offset) & mask(min(bits, 32 - offset))
        assert run("bfm", [bits, offset], [32, 32], 32)[0] == (mask(bits) << offset) & mask(32)
        shift = (field & -field).bit_length() - 1 if field else 0
        expected = base if field == 0 else (base & ~field | (insert << shift) & field) & mask(32)
        assert run("bfi", [field, insert, base], [32] * 3, 32)[0] == expected


def test_agx_pseudo_ops_and_their_promises():
    assert run("amul", [0x8000, 0x10000], [32, 32], 32)[1]  # 2**31 > INT32_MAX
    assert run("amul", [0x7FFF, 0x10000], [32, 32], 32) == (0x7FFF0000, False)
    assert run("imadshl_agx", [3, 5, 7, 4], [32] * 4, 32) == (3 * 5 + (7 << 4), False)
    assert run("imadshl_agx", [3, 5, 7, 5], [32] * 4, 32)[1]  # shift above 4
    assert run("ilea_agx", [1 << 40, mask(32), 3], [64, 32, 32], 64) == ((1 << 40) - 8, False)
    assert run("extr_agx", [0x89ABCDEF, 0x01234567, 8, 12], [32] * 4, 32) == (0xBCD, False)
    assert run("extr_agx", [1, 2, 64, 0], [32] * 4, 32) == (0, False)  # shifts of 64+ give 0


def _c_extract(x, index, w, field, is_signed):
    """nir_opcodes.py's (uintN_t)(src0 >> (src1 * N)) with C's promotion of narrow sources
    to int (signed for extract_i*, whose src0 is intN_t)."""
    promoted = signed(x, w) if is_signed else x
    piece = (promoted >> (field * index)) & mask(field)
    return (signed(piece, field) if is_signed else piece) & mask(w)


@pytest.mark.parametrize("name", ["extract_u8", "extract_i8", "extract_u16", "extract_i16"])
def test_extract_indexes_the_c_promoted_value_and_is_undefined_past_it(name):
    field, is_signed = (8 if name.endswith("8") else 16), "_i" in name
    rng = random.Random(name)
    for w in SIZES:
        lanes = max(w, 32) // field
        for x in values(rng, w, 40) + [mask(w), 1 << (w - 1)]:
            for index in range(lanes):
                got, undefined = run(name, (x, index), (w, w), w)
                assert not undefined and got == _c_extract(x, index, w, field, is_signed), (
                    name, w, x, index)
            if lanes < 1 << w:
                assert run(name, (x, lanes), (w, w), w)[1]  # a C shift past the width


def test_a_narrow_negative_value_extends_its_sign_into_the_bytes_above_it():
    assert run("extract_i8", (0x80, 2), (8, 8), 8) == (0xFF, False)
    assert run("extract_u8", (0x80, 2), (8, 8), 8) == (0, False)


@pytest.mark.parametrize("name", ["insert_u8", "insert_u16"])
def test_insert_shifts_at_the_c_promoted_width_then_truncates(name):
    field = 8 if name.endswith("8") else 16
    rng = random.Random(name)
    for w in SIZES:
        lanes = max(w, 32) // field
        for x in values(rng, w, 40):
            for index in range(lanes):
                got, undefined = run(name, (x, index), (w, w), w)
                assert not undefined
                assert got == ((x & mask(field)) << (field * index)) & mask(w), (name, w, x)
            if lanes < 1 << w:
                assert run(name, (x, lanes), (w, w), w)[1]


def _dot(x, y, lane, signed_x, signed_y):
    total = 0
    for i in range(32 // lane):
        px, py = (x >> (lane * i)) & mask(lane), (y >> (lane * i)) & mask(lane)
        total += (signed(px, lane) if signed_x else px) * (signed(py, lane) if signed_y else py)
    return total


@pytest.mark.parametrize("name, lane, signed_x, signed_y, saturate", [
    ("udot_4x8_uadd_sat", 8, False, False, "u"), ("udot_2x16_uadd_sat", 16, False, False, "u"),
    ("sdot_4x8_iadd_sat", 8, True, True, "s"), ("sudot_4x8_iadd_sat", 8, True, False, "s"),
    ("udot_4x8_uadd", 8, False, False, None), ("sdot_2x16_iadd", 16, True, True, None)])
def test_packed_dot_products_and_their_accumulator(name, lane, signed_x, signed_y, saturate):
    rng = random.Random(name)
    for x, y, acc in zip(*(values(rng, 32, SAMPLES) for _ in range(3)), strict=True):
        got, undefined = run(name, (x, y, acc), (32, 32, 32), 32)
        dot = _dot(x, y, lane, signed_x, signed_y)
        if saturate == "u":  # a uint32 accumulator: 0x80000000 is 2**31, not negative
            expected = min(dot + acc, mask(32))
        elif saturate == "s":
            expected = max(min(dot + signed(acc, 32), (1 << 31) - 1), -(1 << 31))
        else:
            expected = dot + acc
        assert not undefined and got == expected & mask(32), (name, x, y, acc)
