"""The machine verifier: one test per error class."""

import pytest

from agxir.text import parse_function
from agxir.verifier import verify

CF = "  r0l = mov_imm value=0x0\n  if_icmp r1, #0 cond=ueq inv=0 n=1\n  pop_exec n=1\n"


def _errors(body: str, level: str = "machine", header: str = "") -> list[str]:
    text = f"func.{level} @v(u0:32){header} {{\nb0:\n{body}  stop\n}}\n"
    return [str(e) for e in verify(parse_function(text))]


def test_a_valid_machine_function_verifies():
    assert _errors("  r1 = mov_imm value=0x1\n" + CF + "  r2 = iadd r1, u0 shift=0\n  export r2 slot=0\n") == []


@pytest.mark.parametrize(
    "body, level, message",
    [
        ("  h3:32 = mov_imm value=0x1\n", "machine", "h3:32 is not aligned"),
        ("  r1 = mov_imm value=0x1\n  r2l = iadd r1, u0 shift=0\n", "machine", "source a is 32 bits, wider than the 16-bit destination"),
        ("  r2 = iadd r1, u0 shift=0\n", "machine", "reads r1, which no path from the entry writes"),
        ("  r1 = mov_imm value=0x1\n  r2, r2 = parallel_copy r1, r1\n", "machine", "is written twice"),
        ("  r1 = mov_imm value=0x1\n  r2 = parallel_copy d2\n", "machine", "copy of 64 bits into 32"),
        ("  r1 = mov_imm value=0x1\n" + CF + "  r0l = iadd r1, u0 shift=0\n", "machine", "iadd writes r0l"),
        ("  r1 = mov_imm value=0x1\n" + CF + "  r0 = iadd r1, u0 shift=0\n", "machine", "r0 overlaps r0l"),
        ("  v1:32 = mov_imm value=0x1\n", "machine", "virtual register"),
        ("  r1 = mov_imm value=0x1\n", "vreg", "register r1 at the vreg level"),
        ("  v1:32 = mov_imm value=0x1\n  v1:16 = mov_imm value=0x1\n", "vreg", "v1 is used as 32 and 16 bits"),
        ("  %x:32 = mov_imm value=0x1\n", "machine", "SSA value %x at the machine level"),
    ],
)
def test_each_error_class_is_reported(body, level, message):
    errors = _errors(body, level)
    assert any(message in error for error in errors), errors


def test_without_control_flow_r0l_is_an_ordinary_register():
    assert _errors("  r0l = mov_imm value=0x1\n  export r0l slot=0\n") == []


def test_phi_sources_follow_the_logical_predecessors():
    text = """\
func.exec @p() {
b0: -> b2
  %a:32 = mov_imm value=0x1
b1: -> b2
  %b:32 = mov_imm value=0x2
b2:
  %c:32 = phi [%b, b1], [%a, b0]
  stop
}
"""
    assert any("phi sources must come from b0, b1" in str(e) for e in verify(parse_function(text)))
