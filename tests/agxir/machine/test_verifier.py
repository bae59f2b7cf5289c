"""The machine verifier: one test per error class, and the valid forms it must accept."""

import pytest

from agxir.ir import Block, Register, Uniform, clone_function
from agxir.text import parse_function
from agxir.verifier import verify

VALID = """\
func.machine @f(u0:32) {
b0: -> b1, b2
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  if_icmp r1, #2 cond=ult inv=0 n=1
b1: -> b3
  r2 = iadd r1, u0 shift=1
b2: -> b3
  else_icmp #0, #0 cond=ueq inv=0 n=1
  r2 = iadd r1, u0 shift=0
  pop_exec n=1
b3:
  export r2 slot=0
  stop
}
"""

VALID_EXEC = """\
func.exec @f(u0:32) {
b0: -> b1, b2
  r0l = mov_imm value=0x0
  %t:32 = get_sr sr=thread_id
  if_icmp %t, #2 cond=ult inv=0 n=1
b1: -> b3
  %a:32 = iadd %t, u0 shift=1
b2: -> b3
  else_icmp #0, #0 cond=ueq inv=0 n=1
  %b:32 = iadd %t, u0 shift=0
  pop_exec n=1
b3:
  %c:32 = phi [%a, b1], [%b, b2]
  export %c slot=0
  stop
}
"""


def _errors(body: str, level: str = "machine") -> list[str]:
    text = f"func.{level} @v(u0:32) {{\nb0:\n{body}  stop\n}}\n"
    return [str(e) for e in verify(parse_function(text))]


def _messages(fn) -> list[str]:
    return [str(e) for e in verify(fn)]


def test_the_valid_forms_verify():
    assert _messages(parse_function(VALID)) == []
    assert _messages(parse_function(VALID_EXEC)) == []


@pytest.mark.parametrize(
    "body, level, message",
    [
        ("  h3:32 = mov_imm value=0x1\n", "machine", "h3:32 is not aligned"),
        ("  r1 = mov_imm value=0x1\n  r2l = iadd r1, u0 shift=0\n", "machine", "source a is 32 bits, wider than the 16-bit destination"),
        ("  r2 = iadd r1, u0 shift=0\n", "machine", "reads r1, which no path from the entry writes"),
        ("  r1l = mov_imm value=0x1\n  r2 = iadd r1, u0 shift=0\n", "machine", "reads r1, which no path"),
        ("  r1 = mov_imm value=0x1\n  r2, r2 = parallel_copy r1, r1\n", "machine", "r2 is written twice"),
        ("  r1 = mov_imm value=0x1\n  d2, r3 = parallel_copy r1, r1\n", "machine", "r3 is written twice"),
        ("  r1 = mov_imm value=0x1\n  r2 = parallel_copy d2\n", "machine", "copy of 64 bits into 32"),
        ("  v1:32 = mov_imm value=0x1\n", "machine", "virtual register"),
        ("  r1 = mov_imm value=0x1\n", "vreg", "register r1 at the vreg level"),
        ("  r1 = mov_imm value=0x1\n", "exec", "register r1 at the exec level (only r0l is allowed)"),
        # v1:16 is the low half of v1: writing it leaves the high half unwritten
        ("  v1:16 = mov_imm value=0x1\n  v2:32 = iadd v1:32, #1 shift=0\n", "vreg", "reads v1, which no path from the entry writes"),
        ("  v1:32 = mov_imm value=0x1\n  v1:16, v1:32 = parallel_copy v1:16, v1:32\n", "vreg", "v1 is written twice"),
        ("  v2:32 = iadd v1:32, u0 shift=0\n", "vreg", "reads v1, which no path from the entry writes"),
        ("  %x:32 = mov_imm value=0x1\n", "machine", "SSA value %x at the machine level"),
        ("  r1 = mov_imm value=0x1\n  r2 = iadd r1, #300 shift=0\n", "machine", "immediate #300 does not fit"),
        # r0l discipline under control flow
        ("  r0l = mov_imm value=0x0\n  r1 = iadd u0, u0 shift=0\n  r0l = iadd r1, u0 shift=0\n  pop_exec n=1\n", "machine", "iadd writes r0l"),
        ("  r0l = mov_imm value=0x0\n  r0 = iadd u0, u0 shift=0\n  pop_exec n=1\n", "machine", "r0 overlaps r0l"),
        ("  r0l = mov_imm value=0x0\n  d0 = mov_imm value=0x0\n  pop_exec n=1\n", "machine", "d0 overlaps r0l"),
        ("  r0l = mov_imm value=0x2\n  pop_exec n=1\n", "machine", "r0l = mov_imm must write 0"),
        ("  r1 = mov_imm value=0x1\n  r0l, r2 = parallel_copy r1l, r1\n  pop_exec n=1\n", "machine", "parallel_copy writes r0l"),
        # Mesa's layout
        ("  r0l = mov_imm value=0x0\n  pop_exec n=1\n  r1 = mov_imm value=0x1\n", "machine", "mov_imm follows the block's trailing pop_exec"),
        ("  r0l = mov_imm value=0x0\n  else_icmp #0, #0 cond=ueq inv=0 n=1\n", "machine", "else_icmp must be the first instruction"),
        ("  r0l = mov_imm value=0x0\n  stop\n  pop_exec n=1\n", "machine", "stop must be the last instruction"),
    ],
)
def test_each_error_class_is_reported(body, level, message):
    errors = _errors(body, level)
    assert any(message in error for error in errors), errors


def test_without_control_flow_r0l_is_an_ordinary_register():
    assert _errors("  r0l = mov_imm value=0x1\n  export r0l slot=0\n") == []
    assert _errors("  r0 = mov_imm value=0x1\n  export r0 slot=0\n") == []


def test_r0l_may_be_written_by_a_select_under_control_flow():
    """Mesa's break_if lowering writes r0l with icmpsel."""
    body = "  r0l = mov_imm value=0x0\n  r0l = icmpsel u0, #0, #0, #1 cond=ueq\n  pop_exec n=1\n"
    assert _errors(body) == []


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


def test_a_phi_after_the_body_is_reported():
    fn = parse_function(VALID_EXEC)
    b3 = fn.block_named("b3")
    b3.instructions.insert(1, b3.instructions.pop(0))  # export, then the phi
    assert any("phi after a non-phi instruction" in m for m in _messages(fn))


def test_an_exec_value_must_dominate_its_uses_over_the_logical_cfg():
    fn = parse_function(VALID_EXEC)
    b1, b2 = fn.block_named("b1"), fn.block_named("b2")
    a = b1.instructions[0].dest
    b2.instructions[1].srcs[0] = b2.instructions[1].srcs[0].with_ref(a)  # b2 reads b1's %a
    errors = _messages(fn)
    assert any("use of %a is not dominated by its definition in b1" in m for m in errors), errors


def test_an_exec_phi_source_must_be_available_at_its_predecessor():
    fn = parse_function(VALID_EXEC)
    phi = fn.block_named("b3").instructions[0]
    phi.srcs[1] = phi.srcs[0]  # %a from b2, where it is not defined
    errors = _messages(fn)
    assert any("phi source %a for b2 is not available there" in m for m in errors), errors


def test_an_exec_value_defined_twice_is_reported():
    fn = parse_function(VALID_EXEC)
    b2 = fn.block_named("b2")
    b2.instructions[1].dest = fn.block_named("b1").instructions[0].dest
    assert any("%a is defined more than once" in m for m in _messages(fn))


def test_a_logical_successor_outside_the_function_is_reported():
    fn = parse_function(VALID)
    fn.block_named("b3").logical_successors = [Block("elsewhere")]
    assert any("logical successor elsewhere is not a block here" in m for m in _messages(fn))


def test_registers_beyond_the_register_file_are_reported():
    fn = parse_function(VALID)
    fn.block_named("b1").instructions[0].dest = Register(256, 32)
    assert any("beyond the 256 halves" in m for m in _messages(fn))


def test_shape_rules_shared_with_the_ssa_verifier():
    fn = parse_function(VALID)
    iadd = fn.block_named("b1").instructions[0]
    iadd.srcs.pop()
    assert any("iadd takes 2 source(s), found 1" in m for m in _messages(fn))

    fn = parse_function(VALID)
    del fn.block_named("b1").instructions[0].attrs["shift"]
    assert any("missing attribute shift" in m for m in _messages(fn))

    fn = parse_function(VALID)
    iadd = fn.block_named("b1").instructions[0]
    iadd.srcs[1] = iadd.srcs[1].with_ref(Uniform("u7", 32))
    assert any("uniform u7 is not declared" in m for m in _messages(fn))


def test_a_machine_phi_must_write_a_register_of_its_sources_size():
    text = VALID.replace("  r2 = iadd r1, u0 shift=1\n", "  r4 = iadd r1, u0 shift=1\n").replace(
        "  export r2 slot=0\n", "  r2 = phi [r4, b1], [r2, b2]\n  export r2 slot=0\n"
    )
    assert _messages(parse_function(text)) == []
    wrong = parse_function(text.replace("[r4, b1]", "[d4, b1]"))
    assert any("phi source d4 is 64 bits, the destination 32" in m for m in _messages(wrong))


def test_a_clone_verifies_like_the_original():
    assert _messages(clone_function(parse_function(VALID))) == []


def test_a_logical_successor_listed_twice_is_an_error():
    """One logical edge per pair of blocks, as the SSA verifier's two targets must differ:
    out-of-ssa's edge splitting counts edges, and split `-> join, join` into an invalid
    function (found merging the passes' predecessor lists, issue 22)."""
    fn = parse_function(
        "func.exec @dup(u0:32) {\nentry: -> join, join\n  %a:32 = iadd u0, #1 shift=0\n"
        "join:\n  export %a slot=0\n  stop\n}\n")
    assert any("logical successor join is listed twice" in str(e) for e in verify(fn))
