"""Round trip and errors of the exec/vreg/machine text form."""

import pytest

from agxir import clone_function, ir
from agxir.text import ParseError, parse_function, print_function

MACHINE = """\
func.machine @f(u0:32, buf:ptr[64]) {
b0: -> b1, b2
  r0l = mov_imm value=0x0
  r1 = mov_imm value=0x5
  d2 = u2u64 r1
  r1h = mov r1l
  h3:32 = mov r1
  if_icmp r1, #0 cond=ueq inv=1 n=1
b1: -> b2
  r3 = iadd r1, u0 shift=0
  r5, r6 = parallel_copy r6, r5
b2:
  else_icmp #0, #0 cond=ueq inv=0 n=1
  pop_exec n=1
  r7 = phi [r1, b0], [r3, b1]
  export r7 slot=0
  stop
}
"""


def test_machine_text_round_trips_through_parse_print_and_clone():
    fn = parse_function(MACHINE)
    assert fn.level == "machine"
    assert print_function(fn) == MACHINE
    assert print_function(clone_function(fn)) == MACHINE
    assert [b.name for b in fn.blocks[0].successors] == ["b1", "b2"]
    copy = fn.blocks[1].instructions[1]
    assert copy.dests == [ir.Register(10, 32), ir.Register(12, 32)]
    assert fn.blocks[0].instructions[2].dest == ir.Register(4, 64)  # d2 = r2:r3
    assert fn.blocks[0].instructions[4].dest == ir.Register(3, 32)  # misaligned, h3:32


def test_register_names_follow_agx_halves():
    assert ir.Register(0, 16).name == "r0l"
    assert ir.Register(1, 16).name == "r0h"
    assert ir.Register(6, 32).name == "r3"
    assert ir.Register(4, 64).name == "d2"
    assert ir.Register(2, 64).name == "h2:64"
    assert ir.Register(2, 64).overlaps(ir.Register(5, 16))
    assert not ir.Register(2, 32).overlaps(ir.Register(4, 32))


def test_vreg_level_has_parallel_copies_and_no_phis():
    text = "func.vreg @g() {\nb0:\n  v1:32 = mov_imm value=0x1\n  v2:32, v3:32 = parallel_copy v1:32, v1:32\n  stop\n}\n"
    assert print_function(parse_function(text)) == text
    with pytest.raises(ParseError, match="unknown opcode 'phi' at the vreg level"):
        parse_function(text.replace("stop", "v4:32 = phi [v1:32, b0]"))


@pytest.mark.parametrize(
    "line, message",
    [
        ("  d3 = u2u64 r1", "d3 is not aligned"),
        ("  r200 = mov r1", "out of range"),
        ("  h3 = mov r1", "h3 needs a size"),
        ("  r1:32 = mov r1", "has its size in its name"),
        ("  r1, r2 = parallel_copy r1", "2 destinations and 1 sources"),
        ("  if_icmp r1, #0 cond=ueq inv=1 n=1 -> b0", "takes no targets"),
        ("  jump -> b0", "unknown opcode 'jump' at the machine level"),
    ],
)
def test_malformed_machine_lines_give_located_errors(line, message):
    text = f"func.machine @f() {{\nb0:\n  r1 = mov_imm value=0x1\n{line}\n  stop\n}}\n"
    with pytest.raises(ParseError, match=message) as error:
        parse_function(text, "m.agx")
    assert str(error.value).startswith("m.agx:4:")


def test_unknown_level_suffix_is_an_error():
    with pytest.raises(ParseError, match="func.exec, func.vreg or func.machine"):
        parse_function("func.gpu @f() {\nb0:\n  stop\n}\n")
