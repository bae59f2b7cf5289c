"""The printer, on IR built by hand (not through the parser)."""

from __future__ import annotations

import pytest

from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes import OPCODES, spec
from agxir.opcodes.operands import minifloat_encode
from agxir.text import format_instruction, format_operand, print_function

A = Value("a", 32)
B = Value("b", 32)
U = Uniform("u1", 32)


def ins(name, dest, srcs, attrs=None, blocks=None, sat=False):
    return Instruction(OPCODES[name], dest, list(srcs), dict(attrs or {}), list(blocks or []), sat)


def op(ref, abs=False, neg=False):
    return Operand(ref, abs, neg)


# --- operands ---------------------------------------------------------------------------


def test_value_uniform_and_integer_immediate():
    assert format_operand(op(A), spec.INT) == "%a"
    assert format_operand(op(U), spec.INT) == "u1"
    assert format_operand(op(Immediate(65535)), spec.INT) == "#65535"
    assert format_operand(op(Immediate(0x10)), spec.RAW) == "#16"
    assert format_operand(op(Immediate(7)), spec.ADDR) == "#7"


@pytest.mark.parametrize(
    "abs, neg, suffix", [(False, False, ""), (True, False, ".abs"), (False, True, ".neg"),
                         (True, True, ".abs.neg")],
)
def test_modifiers_print_abs_before_neg(abs, neg, suffix):
    assert format_operand(op(A, abs, neg), spec.INT) == "%a" + suffix
    assert format_operand(op(U, abs, neg), spec.FLOAT) == "u1" + suffix
    assert format_operand(op(Immediate(3), abs, neg), spec.INT) == "#3" + suffix


@pytest.mark.parametrize(
    "value, text",
    [(0.5, "#0.5"), (-0.0, "#-0.0"), (0.0, "#0.0"), (1.0, "#1.0"), (31.0, "#31.0"),
     (0.015625, "#0.015625"), (-1.5, "#-1.5")],
)
def test_float_immediates_print_their_minifloat_value(value, text):
    bits = minifloat_encode(value)
    assert format_operand(op(Immediate(bits)), spec.FLOAT) == text
    assert format_operand(op(Immediate(bits), neg=True), spec.FLOAT) == text + ".neg"


def test_minifloat_bits_print_as_integers_on_integer_sources():
    bits = minifloat_encode(0.5)
    assert format_operand(op(Immediate(bits)), spec.INT) == f"#{bits}"


# --- instructions -----------------------------------------------------------------------


def test_int_attribute_prints_decimal():
    text = format_instruction(ins("iadd", Value("d", 64), [op(A), op(U, abs=True)], {"shift": 2}))
    assert text == "%d:64 = iadd %a, u1.abs shift=2"


def test_enum_attributes_print_by_name_in_row_order():
    text = format_instruction(ins("icmp", Value("c", 16), [op(A), op(Immediate(10))],
                                  {"inv": 0, "cond": "ult"}))
    assert text == "%c:16 = icmp %a, #10 cond=ult inv=0"
    text = format_instruction(ins("device_load", Value("x", 16), [op(Uniform("p", 64, 64)),
                                  op(A, abs=True)], {"shift": 1, "fmt": "i16"}))
    assert text == "%x:16 = device_load p, %a.abs fmt=i16 shift=1"
    assert format_instruction(ins("get_sr", Value("t", 32), [], {"sr": "thread_id"})) == (
        "%t:32 = get_sr sr=thread_id"
    )
    assert format_instruction(ins("convert", Value("f", 32), [op(A)], {"mode": "f2s"})) == (
        "%f:32 = convert %a mode=f2s"
    )


def test_hex_attributes_print_lowercase_hex():
    text = format_instruction(ins("mov_imm", Value("k", 32), [], {"value": 0x3F800000}))
    assert text == "%k:32 = mov_imm value=0x3f800000"
    assert format_instruction(ins("mov_imm", Value("z", 16), [], {"value": 0})) == (
        "%z:16 = mov_imm value=0x0"
    )
    text = format_instruction(ins("bitop", Value("b", 32), [op(A), op(B)], {"tt": 0xC}))
    assert text == "%b:32 = bitop %a, %b tt=0xc"


@pytest.mark.parametrize(
    "tt, alias",
    [(0x8, "and"), (0xE, "or"), (0x6, "xor"), (0x1, "nor"), (0x7, "nand"), (0x9, "xnor"),
     (0x4, "andn1"), (0x2, "andn2"), (0xD, "orn1"), (0xB, "orn2"), (0xA, "mov"), (0x5, "not")],
)
def test_bitop_prints_its_alias(tt, alias):
    if alias in ("mov", "not"):
        text = format_instruction(ins("bitop", Value("r", 32), [op(A), op(Immediate(0))],
                                      {"tt": tt}))
        assert text == f"%r:32 = {alias} %a"
    else:
        text = format_instruction(ins("bitop", Value("r", 32), [op(A), op(B)], {"tt": tt}))
        assert text == f"%r:32 = {alias} %a, %b"


@pytest.mark.parametrize(
    "second, text",
    [(op(B), "%r:32 = bitop %a, %b tt=0x5"),
     (op(Immediate(1)), "%r:32 = bitop %a, #1 tt=0x5"),
     (op(Immediate(0), abs=True), "%r:32 = bitop %a, #0.abs tt=0x5"),
     (op(Immediate(0), neg=True), "%r:32 = bitop %a, #0.neg tt=0x5")],
)
def test_unary_alias_only_when_second_source_is_plain_zero(second, text):
    assert format_instruction(ins("bitop", Value("r", 32), [op(A), second], {"tt": 5})) == text


def test_bitop_without_alias_prints_tt():
    for tt in (0x0, 0x3, 0xC, 0xF):
        text = format_instruction(ins("bitop", Value("r", 16), [op(A), op(B)], {"tt": tt}))
        assert text == f"%r:16 = bitop %a, %b tt={tt:#x}"


def test_sat_and_float_sources():
    text = format_instruction(ins("ffma", Value("f", 16), [op(A, neg=True), op(U, abs=True),
                              op(Immediate(minifloat_encode(-0.0)))], sat=True))
    assert text == "%f:16 = ffma.sat %a.neg, u1.abs, #-0.0"


def test_compare_select_kinds_per_position():
    half = minifloat_encode(0.5)
    text = format_instruction(ins("fcmpsel", Value("s", 32), [
        op(A), op(Immediate(half)), op(Immediate(half)), op(Immediate(half))], {"cond": "ltn"}))
    assert text == f"%s:32 = fcmpsel %a, #0.5, #{half}, #{half} cond=ltn"


def test_phi_prints_sources_with_their_blocks():
    b1, b2 = Block("b1"), Block("b2")
    phi = ins("phi", Value("p", 32), [op(A), op(Immediate(7))], blocks=[b1, b2])
    assert format_instruction(phi) == "%p:32 = phi [%a, b1], [#7, b2]"
    assert format_instruction(ins("phi", Value("q", 16), [])) == "%q:16 = phi"


def test_terminators_print_targets():
    b1, b2 = Block("b1"), Block("b2")
    assert format_instruction(ins("jump", None, [], blocks=[b1])) == "jump -> b1"
    assert format_instruction(ins("stop", None, [])) == "stop"
    text = format_instruction(ins("if_fcmp", None, [op(A), op(Immediate(minifloat_encode(1.0)))],
                                  {"cond": "gtn", "inv": 1}, [b2, b1]))
    assert text == "if_fcmp %a, #1.0 cond=gtn inv=1 -> b2, b1"


def test_no_destination_instructions():
    text = format_instruction(ins("device_store", None, [op(A), op(Uniform("p", 64, 16)),
                              op(Immediate(0x1F))], {"fmt": "i8", "shift": 0}))
    assert text == "device_store %a, p, #31 fmt=i8 shift=0"
    assert format_instruction(ins("export", None, [op(A)], {"slot": 7})) == "export %a slot=7"


def test_ill_formed_ir_still_prints():
    # A verifier prints instructions it rejects: missing/extra attributes, missing blocks.
    assert format_instruction(ins("iadd", None, [op(A)], {"bogus": 3})) == "iadd %a bogus=3"
    phi = ins("phi", Value("p", 32), [op(A), op(B)], blocks=[Block("b1")])
    assert format_instruction(phi) == "%p:32 = phi [%a, b1], [%b, ?]"
    text = format_instruction(ins("fadd", Value("x", 32), [op(Immediate(0x1234)), op(A)]))
    assert text == "%x:32 = fadd #4660, %a"


# --- functions --------------------------------------------------------------------------


def test_function_header_uniforms_and_layout():
    entry, exit_ = Block("entry"), Block("exit")
    fn = Function("k.main", [Uniform("buf", 64, buffer_bytes=256), Uniform("n", 16),
                             Uniform("w", 64)], [entry, exit_])
    entry.instructions.append(ins("jump", None, [], blocks=[exit_]))
    exit_.instructions.append(ins("export", None, [op(fn.uniforms[1])], {"slot": 0}))
    exit_.instructions.append(ins("stop", None, []))
    assert print_function(fn) == (
        "func @k.main(buf:ptr[256], n:16, w:64) {\n"
        "entry:\n"
        "  jump -> exit\n"
        "exit:\n"
        "  export n slot=0\n"
        "  stop\n"
        "}\n"
    )


def test_empty_function():
    assert print_function(Function("f")) == "func @f() {\n}\n"
