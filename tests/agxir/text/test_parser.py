"""The parser: what it builds, every error it reports, and that it only ever raises ParseError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agxir.ir import Immediate, Operand, Uniform, Value
from agxir.opcodes import BITOP_ALIASES, OPCODES
from agxir.opcodes.operands import minifloat_encode
from agxir.text import ParseError, parse_function, print_function

SAXPY = """\
; a comment runs from ';' to end of line (anywhere)
func @saxpy(u0:ptr[256], u1:32, u2:16) {
block0:
  %tid:32 = get_sr sr=thread_id   ; thread index
  %a:32 = iadd %tid, u1.abs shift=2
  %c:16 = icmp %a, #10 cond=ult inv=0
  if_icmp %c, #0 cond=ueq inv=1 -> block1, block2
block1:
  %x:32 = fadd.sat %a.neg, #0.5
  jump -> block3
block2:
  %y:32 = and %a, %tid
  %n:32 = not %y
  jump -> block3
block3:
  %p:32 = phi [%x, block1], [%n, block2]
  device_store %p, u0, %tid.abs fmt=i32 shift=0
  export %p slot=0
  stop
}
"""


def body(*lines: str, uniforms: str = "u0:ptr[64], u1:32") -> str:
    """A function with one block `b0`; `lines` are indented instructions."""
    text = f"func @f({uniforms}) {{\nb0:\n"
    return text + "".join(f"  {line}\n" for line in lines) + "}\n"


def only(text: str):
    """The instructions of a parsed function, as a list."""
    return list(parse_function(text).instructions())


# --- what the parser builds -------------------------------------------------------------


def test_saxpy_structure():
    fn = parse_function(SAXPY, "saxpy.agx")
    assert fn.name == "saxpy"
    assert [(u.name, u.size, u.buffer_bytes) for u in fn.uniforms] == [
        ("u0", 64, 256), ("u1", 32, None), ("u2", 16, None)]
    assert fn.uniforms[0].is_buffer and not fn.uniforms[1].is_buffer
    assert [b.name for b in fn.blocks] == ["block0", "block1", "block2", "block3"]
    assert fn.entry is fn.blocks[0]
    assert fn.instruction_count() == 13

    tid, iadd, icmp, branch = fn.blocks[0].instructions
    assert tid.attrs == {"sr": "thread_id"} and tid.dest.size == 32
    assert iadd.opcode is OPCODES["iadd"]
    assert iadd.srcs == [Operand(tid.dest), Operand(fn.uniforms[1], abs=True)]
    assert iadd.attrs == {"shift": 2}
    assert icmp.srcs[1] == Operand(Immediate(10)) and icmp.attrs == {"cond": "ult", "inv": 0}
    assert branch.dest is None
    assert branch.blocks == [fn.blocks[1], fn.blocks[2]]
    assert fn.blocks[0].successors == [fn.blocks[1], fn.blocks[2]]

    fadd = fn.blocks[1].instructions[0]
    assert fadd.sat and fadd.srcs[0] == Operand(iadd.dest, neg=True)
    assert fadd.srcs[1] == Operand(Immediate(minifloat_encode(0.5)))

    phi = fn.blocks[3].instructions[0]
    assert phi.is_phi
    assert [s.ref for s in phi.srcs] == [fadd.dest, fn.blocks[2].instructions[1].dest]
    assert phi.blocks == [fn.blocks[1], fn.blocks[2]]
    store = fn.blocks[3].instructions[1]
    assert store.attrs == {"fmt": "i32", "shift": 0}
    assert store.srcs[1].ref is fn.uniforms[0]


def test_binary_aliases_become_bitop_with_tt():
    for alias, tt in BITOP_ALIASES.items():
        if alias in ("mov", "not"):
            continue
        (ins,) = only(body(f"%r:16 = {alias} u1, #5"))
        assert ins.opcode is OPCODES["bitop"]
        assert ins.attrs == {"tt": tt}
        assert len(ins.srcs) == 2 and ins.srcs[1] == Operand(Immediate(5))


@pytest.mark.parametrize("alias, tt", [("mov", 0xA), ("not", 0x5)])
def test_unary_aliases_add_a_zero_source(alias, tt):
    (ins,) = only(body(f"%r:32 = {alias} u1.abs"))
    assert ins.opcode is OPCODES["bitop"] and ins.attrs == {"tt": tt}
    assert ins.srcs[1] == Operand(Immediate(0))
    assert ins.srcs[0].abs and ins.srcs[0].ref.name == "u1"


def test_explicit_bitop_takes_tt_in_decimal_or_hex():
    first, second = only(body("%r:32 = bitop u1, u1 tt=12", "%s:32 = bitop u1, u1 tt=0xC"))
    assert first.attrs == second.attrs == {"tt": 12}
    assert all(isinstance(i.attrs["tt"], int) for i in (first, second))


def test_int_attributes_accept_hex_and_enum_attributes_store_names():
    a, b, c = only(body("%a:32 = iadd u1, #1 shift=0x4", "%b:64 = mov_imm value=1065353216",
                        "%c:32 = convert %a mode=u2f"))
    assert a.attrs == {"shift": 4}
    assert b.attrs == {"value": 0x3F800000}
    assert c.attrs == {"mode": "u2f"}
    assert print_function(parse_function(body("%b:64 = mov_imm value=1065353216"))).count(
        "value=0x3f800000") == 1


@pytest.mark.parametrize(
    "literal, value",
    [("#0.5", 0.5), ("#-0.0", -0.0), ("#1.0", 1.0), ("#31.0", 31.0), ("#0.015625", 0.015625),
     ("#1", 1.0), ("#0.0", 0.0), ("#-2.5", -2.5)],
)
def test_float_immediates_store_the_minifloat_encoding(literal, value):
    (ins,) = only(body(f"%r:32 = fmul u1, {literal}"))
    assert ins.srcs[1] == Operand(Immediate(minifloat_encode(value)))


def test_negative_zero_and_zero_are_distinct_minifloats():
    a, b = only(body("%a:32 = fmov #0.0", "%b:32 = fmov #-0.0"))
    assert a.srcs[0].ref.bits == 0x00 and b.srcs[0].ref.bits == 0x80


def test_integer_immediates_decimal_and_hex():
    a, b = only(body("%a:32 = iadd u1, #0xFFFF shift=0", "%b:32 = iadd u1, #65535 shift=0"))
    assert a.srcs[1] == b.srcs[1] == Operand(Immediate(0xFFFF))


def test_modifiers_any_order_on_any_operand():
    (ins,) = only(body("%r:32 = imad u1.neg.abs, #3.abs, #0.neg shift=0"))
    assert ins.srcs == [Operand(ins.srcs[0].ref, True, True), Operand(Immediate(3), abs=True),
                        Operand(Immediate(0), neg=True)]


def test_forward_references_resolve_to_the_same_value():
    fn = parse_function("""\
func @loop(n:32) {
entry:
  jump -> head
head:
  %i:32 = phi [#0, entry], [%next, head]
  %next:32 = iadd %i, #1 shift=0
  if_icmp %next, n cond=ult inv=0 -> head, done
done:
  stop
}
""")
    phi, add, _ = fn.blocks[1].instructions
    assert phi.srcs[1].ref is add.dest and add.srcs[0].ref is phi.dest
    assert phi.blocks == [fn.blocks[0], fn.blocks[1]]


def test_phi_keeps_modifiers_it_reads():
    fn = parse_function("func @f() {\nb0:\n  %p:32 = phi [%p.abs, b0]\n  jump -> b0\n}\n")
    phi = fn.blocks[0].instructions[0]
    assert phi.srcs == [Operand(phi.dest, abs=True)]


def test_empty_function_and_sizes_not_checked_against_the_row():
    assert parse_function("func @e() {\n}\n").blocks == []
    (ins,) = only(body("%r:64 = fadd u1, u1"))  # illegal size for fadd: the verifier's job
    assert isinstance(ins.dest, Value) and ins.dest.size == 64


def test_uniform_sizes():
    fn = parse_function("func @f(a:16, b:32, c:64, d:ptr[0x100]) {\n}\n")
    assert [(u.size, u.buffer_bytes) for u in fn.uniforms] == [
        (16, None), (32, None), (64, None), (64, 256)]
    assert all(isinstance(u, Uniform) for u in fn.uniforms)


def test_parse_error_format():
    with pytest.raises(ParseError) as info:
        parse_function("func @f() {\nb0:\n  frob\n}\n", "prog.agx")
    err = info.value
    assert (err.filename, err.line, err.col, err.message) == (
        "prog.agx", 3, 3, "unknown opcode 'frob'")
    assert str(err) == "prog.agx:3:3: unknown opcode 'frob'"
    with pytest.raises(ParseError, match=r"^<string>:3:3: "):
        parse_function("func @f() {\nb0:\n  frob\n}\n")


# --- errors: exact position and message ---------------------------------------------------

# Each case replaces line 3 of `body(...)` (the only instruction, indented from column 3).
LINE_ERRORS = [
    ("%x:32 = iadd u1, #1 shift=7", 3, 29, "shift=7 is not one of 0..4"),
    ("%x:32 = iadd u1, #1", 3, 11, "missing attribute 'shift'"),
    ("%x:32 = icmp u1, #1 cond=ult", 3, 11, "missing attribute 'inv'"),
    ("%x:32 = iadd u1, #1 shift=0 x=1", 3, 31, "unknown attribute 'x' for iadd"),
    ("%x:32 = iadd u1, #1 shift=0 shift=1", 3, 31, "duplicate attribute 'shift'"),
    ("%x:32 = icmp u1, #1 cond=foo inv=0", 3, 28,
     "cond=foo is not one of ueq, ult, ugt, seq, slt, sgt"),
    ("%x:32 = device_load u0, u1 fmt=i64 shift=0", 3, 34, "fmt=i64 is not one of i8, i16, i32"),
    ("%x:32 = icmp u1, #1 cond=ult inv=2", 3, 36, "inv=2 is not one of 0, 1"),
    ("%x:32 = iadd u1, #-3 shift=0", 3, 20, "write '#3.neg'"),
    ("%x:32 = iadd u1, #0x10000 shift=0", 3, 20, "does not fit in 16 bits"),
    ("%x:32 = iadd u1, #0.5 shift=0", 3, 20, "expected an integer immediate"),
    ("%x:32 = fadd u1, #0.3", 3, 20, "not an 8-bit minifloat: #0.3"),
    ("%x:32 = fadd u1, #64.0", 3, 20, "not an 8-bit minifloat: #64.0"),
    ("%x:32 = fadd u1, #0x3", 3, 20, "malformed float immediate '#0x3'"),
    ("%x:32 = iadd u1, #12ab shift=0", 3, 20, "malformed immediate '#12ab'"),
    ("%x:32 = iadd.sat u1, #1 shift=0", 3, 15, "iadd does not accept .sat"),
    ("%x:32 = fadd.sat.sat u1, #1.0", 3, 19, "duplicate '.sat'"),
    ("%x:32 = iadd u1 shift=0", 3, 11, "iadd expects 2 operands, found 1"),
    ("%x:32 = iadd u1, u1, u1 shift=0", 3, 24, "iadd expects 2 operands, found 3"),
    ("%x:32 = not u1, u1", 3, 19, "not expects 1 operand, found 2"),
    ("%x:32 = and u1, u1 tt=0x8", 3, 22, "unknown attribute 'tt' for and"),
    ("%x:32 = iadd %zz, #1 shift=0", 3, 16, "undefined value %zz"),
    ("%x:32 = iadd u9, #1 shift=0", 3, 16, "undefined uniform 'u9'"),
    ("%x:32 = iadd u1.foo, #1 shift=0", 3, 18, "unknown modifier '.foo'"),
    ("%x:32 = iadd u1.abs.abs, #1 shift=0", 3, 22, "duplicate modifier '.abs'"),
    ("%x:32 = frob u1", 3, 11, "unknown opcode 'frob'"),
    ("%x:24 = iadd u1, #1 shift=0", 3, 6, "size must be 16, 32 or 64, not 24"),
    ("%x = iadd u1, #1 shift=0", 3, 6, "expected ':' and a size after the destination"),
    ("%x:32 = export u1 slot=0", 3, 3, "export has no destination"),
    ("iadd u1, #1 shift=0", 3, 3, "iadd needs a destination"),
    ("%x:32 = iadd u1, #1 shift=0 -> b0", 3, 31, "iadd takes no targets"),
    ("if_icmp u1, #0 cond=ueq inv=0 -> b0", 3, 3, "if_icmp expects 2 targets, found 1"),
    ("jump -> b0, b0", 3, 15, "jump expects 1 target, found 2"),
    ("jump", 3, 3, "jump expects 1 target, found 0"),
    ("jump -> nowhere", 3, 11, "unknown block 'nowhere'"),
    ("%x:32 = phi [u1, b0], [u1, b7]", 3, 30, "unknown block 'b7'"),
    ("%x:32 = phi u1", 3, 15, "expected '[' to start a phi source"),
    ("%x:32 = iadd u1, #1 shift=0 u1", 3, 31, "expected end of line, found 'u1'"),
    ("%x:32 = iadd u1, shift=0", 3, 20, "expected an operand, found attribute 'shift='"),
    ("%x:32 = iadd u1, #1 shift=-1", 3, 29, "unexpected character '-'"),
    ("%x:32 = iadd u1, $1 shift=0", 3, 20, "unexpected character '$'"),
    ("%x:32 = iadd u1, #1 shift=abs", 3, 29, "shift=abs is not one of 0..4"),
    ("%x:64 = mov_imm value=0x10000000000000000", 3, 25,
     "value=0x10000000000000000 is not one of 0x0..0xffffffffffffffff"),
]


@pytest.mark.parametrize("line, lineno, col, message", LINE_ERRORS)
def test_line_errors(line, lineno, col, message):
    with pytest.raises(ParseError) as info:
        parse_function(body(line), "t.agx")
    err = info.value
    assert (err.line, err.col) == (lineno, col), str(err)
    assert message in err.message, str(err)
    assert str(err).startswith(f"t.agx:{lineno}:{col}: ")


WHOLE_FILE_ERRORS = [
    # instruction before the first label
    ("func @f() {\n  stop\n}\n", 2, 3, "instruction before the first label"),
    # second definition of a value, in a later block
    ("func @f(u:32) {\na:\n  %x:32 = mov u\n  jump -> b\nb:\n  %x:32 = not u\n  stop\n}\n",
     6, 3, "redefinition of %x"),
    ("func @f() {\na:\n  jump -> a\na:\n  stop\n}\n", 4, 1, "duplicate label 'a'"),
    ("func @f(u:32, v:16, u:64) {\n}\n", 1, 21, "duplicate uniform 'u'"),
    ("func @f(u:8) {\n}\n", 1, 11, "size must be 16, 32 or 64, not 8"),
    ("func @f(u:ptr[0]) {\n}\n", 1, 15, "a buffer must have at least one byte"),
    ("func @f(u:ptr) {\n}\n", 1, 14, "expected '[' after 'ptr'"),
    ("func @f(u:int) {\n}\n", 1, 11, "expected a size or 'ptr[BYTES]'"),
    ("func @f() {\nb:\n  stop\n", 4, 1, "expected '}' to close the function"),
    ("func @f() {\nb:\n  stop\n}\nfunc @g() {\n}\n", 5, 1, "one function per file"),
    ("func @f() {\nb:\n  stop }\n", 3, 8, "expected end of line, found '}'"),
    ("function @f() {\n}\n", 1, 1, "expected 'func'"),
    ("func f() {\n}\n", 1, 6, "expected a function name"),
    ("func @f() { b:\n}\n", 1, 13, "expected end of line"),
    ("func @f() {\nb: stop\n}\n", 2, 4, "expected end of line"),
    ("func @f() {\nb:\n  %x:32 = iadd %y, %z shift=0\n  stop\n}\n", 3, 16, "undefined value %y"),
    ("func @f() {\nb:\n  jump -> c\n  %x:32 = get_sr sr=lane\n}\n", 4, 21,
     "sr=lane is not one of thread_id"),
    ("func @f() {\nb:\n  % = stop\n}\n", 3, 3, "expected a value name after '%'"),
]


@pytest.mark.parametrize("text, lineno, col, message", WHOLE_FILE_ERRORS)
def test_whole_file_errors(text, lineno, col, message):
    with pytest.raises(ParseError) as info:
        parse_function(text, "t.agx")
    err = info.value
    assert (err.line, err.col) == (lineno, col), str(err)
    assert message in err.message, str(err)


def test_syntax_errors_win_over_unresolved_names():
    # The undefined %y comes first in the text but names resolve after the whole function.
    text = "func @f() {\nb:\n  export %y slot=0\n  %z:32 = frob\n}\n"
    with pytest.raises(ParseError, match="unknown opcode"):
        parse_function(text)


# --- only ParseError escapes ---------------------------------------------------------------

SNIPPETS = [
    "%", "#", "@", ".", ",", ":", "=", "->", "-", "[", "]", "(", ")", "{", "}", ";", "\n",
    " ", "\t", "0", "7", "64", "0x", "#-1", "#0.3", "#1.5", ".abs", ".neg", ".sat", ".x",
    "phi", "mov", "not", "bitop", "stop", "jump", "block1", "block9", "u0", "u9", "%a",
    "%zz", "ptr[", "ptr[8]", "shift=", "tt=0x5", "cond=", "inv=1", "fmt=i8", "sr=", "é",
    "\r", "func @g() {", "}\n", "block0:\n", "  stop\n",
]


def _mutate(text: str, data) -> str:
    kind = data.draw(st.sampled_from(["insert", "delete", "replace", "lines", "truncate"]))
    if kind == "lines":
        lines = text.split("\n")
        i = data.draw(st.integers(0, len(lines) - 1))
        j = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["swap", "dup", "drop"]))
        if action == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif action == "dup":
            lines.insert(j, lines[i])
        else:
            del lines[i]
        return "\n".join(lines)
    pos = data.draw(st.integers(0, len(text)))
    if kind == "truncate":
        return text[:pos]
    if kind == "insert":
        return text[:pos] + data.draw(st.sampled_from(SNIPPETS)) + text[pos:]
    end = min(len(text), pos + data.draw(st.integers(1, 8)))
    replacement = data.draw(st.sampled_from(SNIPPETS)) if kind == "replace" else ""
    return text[:pos] + replacement + text[end:]


def _parse_or_parse_error(text: str) -> None:
    try:
        fn = parse_function(text, "fuzz.agx")
    except ParseError as err:
        assert err.line >= 1 and err.col >= 1 and err.message
        return
    # Whatever parses prints canonically, and the canonical text is a fixed point.
    printed = print_function(fn)
    assert print_function(parse_function(printed)) == printed


@settings(derandomize=True, max_examples=600, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_programs_raise_only_parse_error(data):
    text = SAXPY
    for _ in range(data.draw(st.integers(1, 4))):
        text = _mutate(text, data)
    _parse_or_parse_error(text)


def test_every_single_deletion_and_truncation_raises_only_parse_error():
    for pos in range(len(SAXPY)):
        _parse_or_parse_error(SAXPY[:pos] + SAXPY[pos + 1:])
        _parse_or_parse_error(SAXPY[:pos])
