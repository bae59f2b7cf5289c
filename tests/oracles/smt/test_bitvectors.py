"""Z3BitVectors (oracles.smt.bitvectors) on hand-checked values, one operation at a time.

Floats are raw IEEE bits: 0x3f800000 is 1.0f, 0x3c00 is 1.0 in f16. Every expected value
here was worked out by hand from IEEE 754 (round to nearest even, subnormals kept, NaN
results canonical: 0x7fc00000 / 0x7e00), not by running another implementation.
"""

from __future__ import annotations

import pytest

from agxir.ir import Block, Function, Instruction, Operand, Uniform, Value
from agxir.opcodes import OPCODES
from oracles.smt import (
    OUT_OF_BOUNDS,
    Memory,
    Z3BitVectors,
    bitvec,
    buffer_base,
    concrete_memory,
    encode_instruction,
    function_memory,
    uniform_terms,
    value_of,
)

M = Z3BitVectors({})


def run(op: str, *args):
    """Apply a machine operation to constants: ints are (value, width) pairs via `bv`."""
    return value_of(getattr(M, op)(*args))


def bv(value: int, width: int):
    return bitvec(value, width)


# --- integers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "a", "b", "width", "expected"),
    [
        ("add", 0xFFFF, 1, 16, 0),
        ("add", 0xFFFFFFFFFFFFFFFF, 2, 64, 1),
        ("sub", 0, 1, 32, 0xFFFFFFFF),
        ("mul", 0x10000, 0x10000, 32, 0),
        ("mul", 0xFFFF, 0xFFFF, 16, 1),
        ("and_", 0xF0F0, 0xFF00, 16, 0xF000),
        ("or_", 0xF0F0, 0x0F00, 16, 0xFFF0),
        ("xor", 0xFFFF, 0x0F0F, 16, 0xF0F0),
    ],
)
def test_integer_arithmetic_wraps(op, a, b, width, expected):
    assert run(op, bv(a, width), bv(b, width), width) == expected


def test_shifts_and_extensions():
    assert run("not_", bv(0x00FF, 16), 16) == 0xFF00
    assert run("shl", bv(0x8001, 16), 1, 16) == 0x0002
    assert run("lshr", bv(0x80000000, 32), 31, 32) == 1
    assert run("shl_var", bv(1, 64), bv(63, 64), 64) == 1 << 63
    assert run("lshr_var", bv(0x8000, 16), bv(15, 16), 16) == 1
    assert run("ashr_var", bv(0x8000, 16), bv(15, 16), 16) == 0xFFFF
    assert run("ashr_var", bv(0x80000000, 32), bv(4, 32), 32) == 0xF8000000
    assert run("ashr_var", bv(0x40000000, 32), bv(4, 32), 32) == 0x04000000
    assert run("sext", bv(0x8000, 16), 16, 32) == 0xFFFF8000
    assert run("sext", bv(0x7FFF, 16), 16, 64) == 0x7FFF
    assert run("zext", bv(0x8000, 16), 16, 64) == 0x8000
    assert run("trunc", bv(0x123456789, 64), 64, 32) == 0x23456789
    assert run("trunc", bv(0x12345678, 32), 32, 16) == 0x5678


def test_predicates_and_select():
    assert run("eq", bv(5, 16), bv(5, 16), 16) is True
    assert run("ult", bv(0xFFFFFFFF, 32), bv(0, 32), 32) is False
    assert run("slt", bv(0xFFFFFFFF, 32), bv(0, 32), 32) is True
    assert run("slt", bv(0x7FFF, 16), bv(0x8000, 16), 16) is False
    yes, no = M.eq(bv(1, 16), bv(1, 16), 16), M.eq(bv(1, 16), bv(2, 16), 16)
    assert value_of(M.both(yes, no)) is False
    assert value_of(M.either(yes, no)) is True
    assert value_of(M.negate(no)) is True
    assert value_of(M.select(yes, bv(7, 32), bv(9, 32), 32)) == 7
    assert value_of(M.select(no, bv(7, 32), bv(9, 32), 32)) == 9
    assert run("const", -1, 16) == 0xFFFF


# --- float arithmetic ------------------------------------------------------------------------


def fop(op: str, fw: int, *bits: int) -> int:
    return value_of(getattr(M, op)(*(bv(b, fw) for b in bits), fw))


@pytest.mark.parametrize(
    ("op", "fw", "args", "expected"),
    [
        ("fadd", 32, (0x3F800000, 0x40000000), 0x40400000),  # 1 + 2 = 3
        ("fadd", 16, (0x3C00, 0x4000), 0x4200),
        # NaN results are canonical, whatever the inputs' payloads and signs.
        ("fadd", 32, (0x7F800000, 0xFF800000), 0x7FC00000),  # inf - inf
        ("fadd", 32, (0x7F800001, 0x3F800000), 0x7FC00000),  # signalling NaN payload
        ("fadd", 32, (0xFFC00001, 0x3F800000), 0x7FC00000),  # negative NaN
        ("fadd", 16, (0x7C00, 0xFC00), 0x7E00),
        ("fadd", 16, (0xFC01, 0x3C00), 0x7E00),
        ("fmul", 32, (0x7F800000, 0x00000000), 0x7FC00000),  # inf * 0
        # Signed zeros: -0 + -0 = -0, -0 + +0 = +0, x - x = +0, -1 * 0 = -0.
        ("fadd", 32, (0x80000000, 0x80000000), 0x80000000),
        ("fadd", 32, (0x80000000, 0x00000000), 0x00000000),
        ("fadd", 16, (0x8000, 0x8000), 0x8000),
        ("fadd", 32, (0x3F800000, 0xBF800000), 0x00000000),
        ("fmul", 32, (0xBF800000, 0x00000000), 0x80000000),
        ("fmul", 16, (0x8000, 0x8000), 0x0000),
        # Subnormals are kept, never flushed.
        ("fadd", 32, (0x00000001, 0x00000001), 0x00000002),
        ("fmul", 32, (0x00800000, 0x3F000000), 0x00400000),  # min normal / 2
        ("fmul", 16, (0x0001, 0x4000), 0x0002),
        ("fmul", 32, (0x00000001, 0x3F000000), 0x00000000),  # 2**-150: tie to even 0
        ("fmul", 32, (0x00000003, 0x3F000000), 0x00000002),  # 1.5 * 2**-149: tie to 2
        # Round to nearest, ties to even.
        ("fadd", 32, (0x3F800000, 0x33800000), 0x3F800000),  # 1 + 2**-24: tie, down
        ("fadd", 32, (0x3F800001, 0x33800000), 0x3F800002),  # tie, up to even
        ("fadd", 32, (0x3F800000, 0x33800001), 0x3F800001),  # just above the tie
        ("fadd", 16, (0x6800, 0x3C00), 0x6800),  # 2048 + 1: tie, down
        ("fadd", 16, (0x6801, 0x3C00), 0x6802),  # 2050 + 1: tie, up
        ("fadd", 16, (0x7BFF, 0x5000), 0x7C00),  # 65504 + 32: rounds to infinity
        ("fadd", 16, (0x7BFF, 0x4C00), 0x7C00),  # 65504 + 16 = 65520: tie, to "even" infinity
        ("fadd", 16, (0x7BFF, 0x4B80), 0x7BFF),  # 65504 + 15: stays finite
    ],
)
def test_float_arithmetic(op, fw, args, expected):
    assert fop(op, fw, *args) == expected


def test_ffma_rounds_once():
    # a = b = 1 + 2**-12: a*b = 1 + 2**-11 + 2**-24 is a tie, which fmul rounds to even.
    a, c = 0x3F800800, 0xBF801000  # c = -(1 + 2**-11)
    assert fop("ffma", 32, a, a, c) == 0x33800000  # exactly 2**-24
    assert fop("fadd", 32, fop("fmul", 32, a, a), c) == 0x00000000  # two roundings
    # A tiny addend decides the tie the other way (one rounding, not two).
    assert fop("ffma", 32, a, a, 0x0D800000) == 0x3F801001  # + 2**-100
    assert fop("fadd", 32, fop("fmul", 32, a, a), 0x0D800000) == 0x3F801000
    # f16: a = b = 1 + 2**-6, c = -(1 + 2**-5); the 2**-12 is lost by fmul alone.
    assert fop("ffma", 16, 0x3C10, 0x3C10, 0xBC20) == 0x0C00
    assert fop("fadd", 16, fop("fmul", 16, 0x3C10, 0x3C10), 0xBC20) == 0x0000


def test_ffma_specials():
    assert fop("ffma", 32, 0x7F800000, 0x00000000, 0x3F800000) == 0x7FC00000  # inf * 0
    assert fop("ffma", 32, 0x3F800000, 0x7F800000, 0xFF800000) == 0x7FC00000  # inf - inf
    assert fop("ffma", 32, 0x80000000, 0x3F800000, 0x80000000) == 0x80000000  # -0 + -0
    assert fop("ffma", 32, 0x3F800000, 0x3F800000, 0xBF800000) == 0x00000000  # exact 0 is +0
    assert fop("ffma", 32, 0x7F7FFFFF, 0x40000000, 0xFF7FFFFF) == 0x7F7FFFFF  # no overflow
    assert fop("ffma", 16, 0x0001, 0x3800, 0x0000) == 0x0000  # 2**-25: tie to even 0


# --- conversions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bits", "expected"),
    [
        (0x3F801000, 0x3C00),  # 1 + 2**-11: tie, down to even
        (0x3F803000, 0x3C02),  # 1 + 3 * 2**-11: tie, up to even
        (0x3F800FFF, 0x3C00),  # just below the tie
        (0x3F801001, 0x3C01),  # just above the tie
        (0x477FF000, 0x7C00),  # 65520: rounds to infinity
        (0x477FEFFF, 0x7BFF),  # just below: 65504
        (0xC77FF000, 0xFC00),
        (0x33800000, 0x0001),  # 2**-24: the smallest f16 subnormal
        (0x33000000, 0x0000),  # 2**-25: tie, down to even zero
        (0x33400000, 0x0001),  # 1.5 * 2**-25 rounds up
        (0x387FC000, 0x03FF),  # the largest subnormal
        (0x80000000, 0x8000),
        (0x7F800000, 0x7C00),
        (0x7F800001, 0x7E00),  # NaN, canonical
        (0xFFC00000, 0x7E00),
    ],
)
def test_fconvert_f32_to_f16(bits, expected):
    assert value_of(M.fconvert(bv(bits, 32), 32, 16)) == expected


def test_fconvert_f16_to_f32_is_exact():
    assert value_of(M.fconvert(bv(0x0001, 16), 16, 32)) == 0x33800000
    assert value_of(M.fconvert(bv(0x7BFF, 16), 16, 32)) == 0x477FE000
    assert value_of(M.fconvert(bv(0x8000, 16), 16, 32)) == 0x80000000
    assert value_of(M.fconvert(bv(0xFC00, 16), 16, 32)) == 0xFF800000
    assert value_of(M.fconvert(bv(0x7C01, 16), 16, 32)) == 0x7FC00000


@pytest.mark.parametrize(
    ("value", "width", "fw", "signed", "expected"),
    [
        ((1 << 24) + 1, 32, 32, False, 0x4B800000),  # tie, down to even
        ((1 << 24) + 3, 32, 32, False, 0x4B800002),  # tie, up to even
        (0xFFFFFFFF, 32, 32, False, 0x4F800000),  # 2**32
        (0xFFFFFFFF, 32, 32, True, 0xBF800000),  # -1
        (0x80000000, 32, 32, True, 0xCF000000),  # -2**31
        ((1 << 60) + (1 << 36) + 1, 64, 32, False, 0x5D800001),  # one rounding, not two
        ((1 << 60) + (1 << 36) + 1, 64, 32, True, 0x5D800001),
        (0xFFFFFFFFFFFFFFFF, 64, 32, False, 0x5F800000),  # 2**64
        (0xFFFFFFFFFFFFFFFF, 64, 16, True, 0xBC00),
        (0xFFFF, 16, 16, False, 0x7C00),  # 65535: infinity in f16
        (0xFFFF, 16, 16, True, 0xBC00),
        (0x8000, 16, 16, True, 0xF800),  # -32768
        (2049, 16, 16, False, 0x6800),  # tie, down to 2048
        (2051, 32, 16, False, 0x6802),  # tie, up to 2052
        (65519, 32, 16, False, 0x7BFF),
        (65520, 32, 16, False, 0x7C00),
        (0, 32, 32, True, 0x00000000),  # +0, never -0
    ],
)
def test_int_to_float(value, width, fw, signed, expected):
    assert value_of(M.int_to_float(bv(value, width), width, fw, signed)) == expected


def test_float_to_int_truncates_in_range():
    assert value_of(M.float_to_int(bv(0x4039999A, 32), 32, 32, True)) == 2  # 2.9
    assert value_of(M.float_to_int(bv(0xC039999A, 32), 32, 32, True)) == 0xFFFFFFFE  # -2.9
    assert value_of(M.float_to_int(bv(0xBE00, 16), 16, 16, True)) == 0xFFFF  # -1.5
    assert value_of(M.float_to_int(bv(0x7BFF, 16), 16, 32, False)) == 65504
    assert value_of(M.float_to_int(bv(0x3F7FFFFF, 32), 32, 64, False)) == 0  # 0.99999994


def convert(mode: str, src_size: int, dest_size: int, bits: int) -> int:
    u = Uniform("x", src_size)
    ins = Instruction(OPCODES["convert"], Value("r", dest_size), [Operand(u)], {"mode": mode})
    encoded = encode_instruction(ins, {u: bv(bits, src_size)})
    assert value_of(encoded.undefined) is False
    return value_of(encoded.result)


@pytest.mark.parametrize(
    ("mode", "src", "dest", "bits", "expected"),
    [
        ("f2s", 32, 32, 0x4F32D05E, 0x7FFFFFFF),  # 3e9
        ("f2s", 32, 32, 0xCF32D05E, 0x80000000),  # -3e9
        ("f2s", 32, 32, 0x4F000000, 0x7FFFFFFF),  # 2**31 exactly
        ("f2s", 32, 32, 0xCF000000, 0x80000000),  # -2**31 exactly
        ("f2s", 32, 32, 0x4EFFFFFF, 0x7FFFFF80),  # the largest f32 below 2**31
        ("f2s", 32, 32, 0xBFC00000, 0xFFFFFFFF),  # -1.5 -> -1
        ("f2s", 32, 32, 0x7FC00000, 0),  # NaN
        ("f2s", 32, 32, 0xFF800001, 0),
        ("f2s", 32, 32, 0x7F800000, 0x7FFFFFFF),
        ("f2s", 32, 32, 0x80000000, 0),
        ("f2s", 16, 16, 0x7BFF, 0x7FFF),  # 65504
        ("f2s", 16, 16, 0xFBFF, 0x8000),
        ("f2s", 16, 16, 0xFC00, 0x8000),
        ("f2s", 16, 32, 0xFBFF, 0xFFFF0020),  # -65504 fits 32 bits
        ("f2u", 32, 32, 0xC0A00000, 0),  # -5
        ("f2u", 32, 32, 0x501502F9, 0xFFFFFFFF),  # 1e10
        ("f2u", 32, 32, 0x4F7FFFFF, 0xFFFFFF00),
        ("f2u", 32, 32, 0xBF000000, 0),  # -0.5
        ("f2u", 32, 16, 0x477FFF80, 0xFFFF),  # 65535.5
        ("f2u", 32, 16, 0x47800000, 0xFFFF),  # 65536 saturates
        ("f2u", 16, 16, 0x7C00, 0xFFFF),
        ("f2u", 16, 16, 0x7E00, 0),
        ("f2u", 16, 32, 0x7BFF, 65504),
    ],
)
def test_convert_saturates(mode, src, dest, bits, expected):
    assert convert(mode, src, dest, bits) == expected


def test_convert_f2f_and_int_to_float_through_the_semantics():
    assert convert("f2f", 32, 16, 0x3F803000) == 0x3C02
    assert convert("f2f", 16, 32, 0x0001) == 0x33800000
    assert convert("u2f", 64, 32, (1 << 60) + (1 << 36) + 1) == 0x5D800001
    assert convert("s2f", 16, 32, 0xFFFF) == 0xBF800000


def test_float_predicates():
    nan, zero, negzero, one = 0x7FC00000, 0x00000000, 0x80000000, 0x3F800000
    assert value_of(M.fis_nan(bv(0x7F800001, 32), 32)) is True
    assert value_of(M.fis_nan(bv(0x7F800000, 32), 32)) is False
    assert value_of(M.fis_nan(bv(0xFE00, 16), 16)) is True
    assert value_of(M.feq(bv(zero, 32), bv(negzero, 32), 32)) is True
    assert value_of(M.feq(bv(nan, 32), bv(nan, 32), 32)) is False
    assert value_of(M.flt(bv(negzero, 32), bv(zero, 32), 32)) is False
    assert value_of(M.fle(bv(negzero, 32), bv(zero, 32), 32)) is True
    assert value_of(M.flt(bv(nan, 32), bv(one, 32), 32)) is False
    assert value_of(M.fle(bv(one, 32), bv(nan, 32), 32)) is False
    assert value_of(M.flt(bv(0xBC00, 16), bv(0x0001, 16), 16)) is True


# --- effects -----------------------------------------------------------------------------------

BASE = buffer_base(0)


def machine_with(buffers, contents):
    return Z3BitVectors({}, thread_id=0, memory=concrete_memory(buffers, contents))


def test_load_is_little_endian_and_bounded():
    m = machine_with([(BASE, 8)], [bytes(range(8))])
    assert value_of(m.load(bv(BASE, 64), 4)) == 0x03020100
    assert value_of(m.load(bv(BASE + 6, 64), 2)) == 0x0706
    assert value_of(m.load(bv(BASE + 7, 64), 1)) == 0x07
    assert value_of(m.undefined()) is False
    m.load(bv(BASE + 5, 64), 4)  # one byte past the end
    assert [reason for reason, _ in m.reasons] == [OUT_OF_BOUNDS] * 4
    assert value_of(m.reasons[-1][1]) is True
    assert value_of(m.undefined()) is True


def test_out_of_bounds_below_and_between_buffers():
    m = machine_with([(BASE, 8), (buffer_base(1), 4)], [b"", b""])
    m.load(bv(BASE - 1, 64), 1)
    assert value_of(m.undefined()) is True
    m = machine_with([(BASE, 8), (buffer_base(1), 4)], [b"", b""])
    m.load(bv(buffer_base(1) + 3, 64), 1)
    assert value_of(m.undefined()) is False
    m.load(bv(BASE + 8, 64), 1)
    assert value_of(m.undefined()) is True


def test_bounds_do_not_wrap_around():
    m = machine_with([(0, 16)], [])
    m.load(bv(0xFFFFFFFFFFFFFFFF, 64), 2)  # address + 2 wraps to 1, inside a naive check
    assert value_of(m.undefined()) is True
    m = machine_with([(0xFFFFFFFFFFFFFFF8, 8)], [])
    m.load(bv(0xFFFFFFFFFFFFFFFC, 64), 4)  # ends exactly at 2**64
    assert value_of(m.undefined()) is False
    m.load(bv(0xFFFFFFFFFFFFFFFE, 64), 4)
    assert value_of(m.undefined()) is True


def test_store_writes_little_endian_bytes():
    m = machine_with([(BASE, 8)], [bytes(8)])
    m.store(bv(BASE + 2, 64), bv(0xAABBCCDD, 32), 4)
    assert value_of(m.undefined()) is False
    assert [value_of(b) for b in m.memory.buffer_bytes(0)] == [0, 0, 0xDD, 0xCC, 0xBB, 0xAA, 0, 0]
    assert value_of(m.load(bv(BASE + 4, 64), 2)) == 0xAABB
    m.store(bv(BASE + 7, 64), bv(0xAABB, 16), 2)
    assert value_of(m.undefined()) is True


def test_function_memory_matches_the_interpreter_layout():
    buf_a = Uniform("a", 64, buffer_bytes=4)
    scalar = Uniform("s", 32)
    buf_b = Uniform("b", 64, buffer_bytes=2)
    fn = Function("f", [buf_a, scalar, buf_b], [Block("block0")])
    memory = function_memory(fn, {"b": b"\x01\x02"})
    assert memory.buffers == ((buffer_base(0), 4), (buffer_base(1), 2))
    assert [value_of(b) for b in memory.buffer_bytes(1)] == [1, 2]
    assert [value_of(b) for b in memory.buffer_bytes(0)] == [0, 0, 0, 0]
    assert value_of(uniform_terms(fn, {})[scalar]) == 0  # as InputSet: missing is 0
    terms = uniform_terms(fn, {"s": 7})
    assert value_of(terms[buf_a]) == buffer_base(0)
    assert value_of(terms[buf_b]) == buffer_base(1)
    assert value_of(terms[scalar]) == 7
    symbolic = uniform_terms(fn, prefix="in_")
    assert str(symbolic[scalar]) == "in_s"
    assert isinstance(function_memory(fn), Memory)


def test_thread_id_and_export():
    tid = Value("t", 16)
    ins = Instruction(OPCODES["get_sr"], tid, [], {"sr": "thread_id"})
    assert value_of(encode_instruction(ins, {}, thread_id=0x12345).result) == 0x2345
    u = Uniform("x", 32)
    export = Instruction(OPCODES["export"], None, [Operand(u)], {"slot": 3})
    encoded = encode_instruction(export, {u: bv(99, 32)})
    assert encoded.result is None
    assert {slot: value_of(v) for slot, v in encoded.exports.items()} == {3: 99}


def test_undefined_reasons_are_kept_in_order():
    a, b = Uniform("a", 32), Uniform("b", 32)
    ins = Instruction(OPCODES["amul"], Value("r", 32), [Operand(a), Operand(b)], {})
    encoded = encode_instruction(ins, {a: bv(0x10000, 32), b: bv(0x8000, 32)})
    assert [reason for reason, _ in encoded.reasons] == ["amul overflow"]
    assert value_of(encoded.undefined) is True  # 2**31 > INT32_MAX
    encoded = encode_instruction(ins, {a: bv(0xFFFF, 32), b: bv(0x8000, 32)})
    assert value_of(encoded.undefined) is False
    assert value_of(encoded.result) == 0x7FFF8000


def test_misaligned_then_out_of_bounds():
    base, index = Uniform("p", 64), Uniform("i", 32)
    ins = Instruction(
        OPCODES["device_load"],
        Value("r", 32),
        [Operand(base), Operand(index)],
        {"fmt": "i32", "shift": 0},
    )
    memory = concrete_memory([(BASE, 8)], [bytes(range(8))])
    encoded = encode_instruction(ins, {base: bv(BASE + 1, 64), index: bv(0, 32)}, memory=memory)
    assert [reason for reason, _ in encoded.reasons] == ["misaligned access", OUT_OF_BOUNDS]
    assert [value_of(cond) for _, cond in encoded.reasons] == [True, False]
    encoded = encode_instruction(ins, {base: bv(BASE, 64), index: bv(1, 32)}, memory=memory)
    assert value_of(encoded.undefined) is False
    assert value_of(encoded.result) == 0x07060504
    encoded = encode_instruction(
        ins, {base: bv(BASE, 64), index: bv(0xFFFFFFFF, 32)}, memory=memory
    )
    assert value_of(encoded.undefined) is True  # index -1: 4 bytes before the buffer


def test_branch_condition_is_a_bool():
    a, b = Uniform("a", 16), Uniform("b", 32)
    ins = Instruction(OPCODES["if_icmp"], None, [Operand(a), Operand(b)], {"cond": "slt", "inv": 0})
    assert value_of(encode_instruction(ins, {a: bv(0xFFFF, 16), b: bv(0, 32)}).result) is True
    ins.attrs["cond"] = "ult"
    assert value_of(encode_instruction(ins, {a: bv(0xFFFF, 16), b: bv(0, 32)}).result) is False


def test_symbolic_operands_stay_symbolic():
    x = Uniform("x", 32)
    ins = Instruction(OPCODES["fadd"], Value("r", 32), [Operand(x), Operand(x)], {})
    encoded = encode_instruction(ins, uniform_terms(Function("f", [x], [])))
    assert encoded.result.size() == 32
    with pytest.raises(ValueError):
        value_of(encoded.result)


def test_phi_is_refused():
    phi = Instruction(OPCODES["phi"], Value("r", 32), [], {})
    with pytest.raises(ValueError):
        encode_instruction(phi, {})
