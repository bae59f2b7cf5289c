"""copyprop: equal-size copies everywhere, zero-extending copies into INT sources only."""

from __future__ import annotations

import dataclasses

import pytest

from agxir.opcodes.table import OPCODES
from agxir.passes import get_pass
from agxir.passes.copyprop import is_mov
from agxir.text import parse_function, print_function
from agxir.verifier import verify


def apply(text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = get_pass("copyprop").run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


def body(lines: str, uniforms: str = "u0:32, u1:16, u2:ptr[64], u3:64") -> str:
    indented = "".join(f"  {line.strip()}\n" for line in lines.strip().splitlines())
    return f"func @p({uniforms}) {{\nb0:\n  %tid:32 = get_sr sr=thread_id\n{indented}  stop\n}}\n"


@pytest.mark.parametrize(
    "lines, expected",
    [
        # INT, keeping the use's own modifiers
        (
            "%m:32 = mov %tid\n%a:32 = iadd u0, %m.abs.neg shift=1\nexport %a slot=0",
            "%a:32 = iadd u0, %tid.abs.neg shift=1",
        ),
        # FLOAT, a uniform, the mov's .abs dropped at equal size
        (
            "%m:32 = mov u0.abs\n%f:32 = fadd %m.neg, #1.0\nexport %f slot=0",
            "%f:32 = fadd u0.neg, #1.0",
        ),
        # RAW
        ("%m:32 = mov %tid\nexport %m slot=0", "export %tid slot=0"),
        # ADDR: a 64-bit buffer base
        (
            "%b:64 = mov u2\n%l:32 = device_load %b, %tid fmt=i32 shift=0\nexport %l slot=0",
            "%l:32 = device_load u2, %tid fmt=i32 shift=0",
        ),
        # integer compares and branches (equal size needs no modifier)
        (
            "%m:32 = mov u0\n%c:16 = icmp %m, %tid cond=slt inv=0\nexport %c slot=0",
            "%c:16 = icmp u0, %tid cond=slt inv=0",
        ),
        (
            "%m:16 = mov u1\n%s:32 = icmpsel %tid, %m, u0, %tid cond=ult\nexport %s slot=0",
            "%s:32 = icmpsel %tid, u1, u0, %tid cond=ult",
        ),
        # 64-bit into a 64-bit INT source
        (
            "%m:64 = mov u3\n%a:64 = iadd %m, #1 shift=0\nexport %a slot=0",
            "%a:64 = iadd u3, #1 shift=0",
        ),
    ],
)
def test_equal_size(lines, expected):
    changed, after = apply(body(lines))
    assert changed
    assert f"  {expected}\n" in after


def test_equal_size_into_phi_and_branch():
    changed, after = apply("""\
func @p(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %m:32 = mov %tid
  %n:32 = mov u0
  if_icmp %m, %n cond=ult inv=0 -> left, join
left:
  jump -> join
join:
  %p:32 = phi [%n, entry], [%m, left]
  export %p slot=0
  stop
}
""")
    assert changed
    assert "  if_icmp %tid, u0 cond=ult inv=0 -> left, join\n" in after
    assert "  %p:32 = phi [u0, entry], [%tid, left]\n" in after
    assert "  %m:32 = mov %tid\n" in after  # the mov itself is left for dce


@pytest.mark.parametrize(
    "lines, expected",
    [
        (
            "%m:32 = mov u1.abs\n%a:32 = iadd %tid, %m.neg shift=0\nexport %a slot=0",
            "%a:32 = iadd %tid, u1.abs.neg shift=0",
        ),
        (
            "%m:32 = mov u1.abs\n%a:32 = bitop %m, %tid tt=0x6\nexport %a slot=0",
            "%a:32 = xor u1.abs, %tid",
        ),
        # The use's own .abs is implied: both extensions agree on zext(x).
        (
            "%m:64 = mov u0.abs\n%a:64 = imad %m.abs, %m, u3 shift=0\nexport %a slot=0",
            "%a:64 = imad u0.abs, u0.abs, u3 shift=0",
        ),
        (
            "%m:32 = mov u1.abs\n%a:32 = amul %m, %tid\nexport %a slot=0",
            "%a:32 = amul u1.abs, %tid",
        ),
    ],
)
def test_zero_extension_into_int_sources(lines, expected):
    changed, after = apply(body(lines))
    assert changed
    assert f"  {expected}\n" in after


@pytest.mark.parametrize(
    "lines",
    [
        # sign-extending mov
        "%m:32 = mov u1\n%a:32 = iadd %tid, %m shift=0\nexport %a slot=0",
        # immediates are never copied
        "%m:32 = mov #5\n%a:32 = iadd %tid, %m shift=0\nexport %a slot=0",
        # a narrow source never goes into FLOAT, RAW or compare operands...
        "%m:32 = mov u1.abs\n%f:32 = fadd %m, #1.0\nexport %f slot=0",
        "%m:32 = mov u1.abs\nexport %m slot=0",
        "%m:32 = mov u1.abs\n%c:16 = icmp %m, %tid cond=ult inv=0\nexport %c slot=0",
        "%m:32 = mov u1.abs\n%s:32 = icmpsel %tid, #1, %m, %tid cond=ult\nexport %s slot=0",
        # ...nor into an INT source without .abs, or of other sizes
        "%m:32 = mov u1.abs\n%s:32 = signext %m\nexport %s slot=0",
        "%m:32 = mov u1.abs\n%l:32 = device_load u2, %m fmt=i32 shift=0\nexport %l slot=0",
        # no movs at all, or a bitop that only looks like one
        "%a:32 = iadd %tid, u0 shift=0\nexport %a slot=0",
        "%m:32 = bitop %tid, #1 tt=0xa\n%a:32 = iadd %m, u0 shift=0\nexport %a slot=0",
    ],
)
def test_left_alone(lines):
    text = body(lines)
    assert apply(text) == (False, text)


def test_narrow_source_not_into_phi():
    text = """\
func @p(u1:16) {
entry:
  %m:32 = mov u1.abs
  jump -> join
join:
  %p:32 = phi [%m, entry]
  export %p slot=0
  stop
}
"""
    assert apply(text) == (False, text)


def test_chains_collapse_and_compose():
    changed, after = apply(
        body("""
        %a:32 = mov u1.abs
        %b:32 = mov %a
        %c:64 = mov %b.abs
        %d:64 = mov %c
        %s:64 = iadd %d, u3 shift=0
        %t:32 = iadd %b, %tid shift=0
        %u:64 = iadd %c, %d shift=2
        export %s slot=0
        export %t slot=1
        export %u slot=2
    """)
    )
    assert changed
    assert "  %s:64 = iadd u1.abs, u3 shift=0\n" in after
    assert "  %t:32 = iadd u1.abs, %tid shift=0\n" in after
    assert "  %u:64 = iadd u1.abs, u1.abs shift=2\n" in after
    assert "  %d:64 = mov u1.abs\n" in after


def test_chain_through_a_sign_extension_stops_there():
    changed, after = apply(
        body("""
        %a:32 = mov u1
        %b:32 = mov %a
        %s:32 = iadd %b, u0 shift=0
        export %s slot=0
    """)
    )
    assert changed
    assert "  %s:32 = iadd %a, u0 shift=0\n" in after


def test_uniform_not_into_a_source_that_refuses_uniforms():
    # No row refuses uniforms today; the rule is checked against a modified row.
    fn = parse_function(body("%m:32 = mov u0\n%a:32 = iadd %tid, %m shift=0\nexport %a slot=0"))
    iadd = next(ins for ins in fn.instructions() if ins.name == "iadd")
    row = OPCODES["iadd"]
    b = dataclasses.replace(row.srcs[1], uniform=False)
    iadd.opcode = dataclasses.replace(row, srcs=(row.srcs[0], b))
    before = print_function(fn)
    assert not get_pass("copyprop").run(fn)
    assert print_function(fn) == before
    m = parse_function(body("%m:32 = mov %tid\n%a:32 = iadd %tid, %m shift=0\nexport %a slot=0"))
    iadd = next(ins for ins in m.instructions() if ins.name == "iadd")
    iadd.opcode = dataclasses.replace(row, srcs=(row.srcs[0], b))
    assert get_pass("copyprop").run(m)  # a value is still fine there


def test_mov_cycle_in_unreachable_code_terminates():
    fn = parse_function("""\
func @p() {
b0:
  stop
dead:
  %a:32 = mov %c
  %b:32 = mov %a
  %c:32 = mov %b
  export %a slot=0
  stop
}
""")
    assert verify(fn) == []
    assert get_pass("copyprop").run(fn)
    assert verify(fn) == []


def test_is_mov():
    fn = parse_function(
        body("%m:32 = mov %tid\n%n:32 = not %tid\n%o:32 = bitop %tid, #0.abs tt=0xa")
    )
    movs = [ins.dest.name for ins in fn.instructions() if is_mov(ins)]
    assert movs == ["m"]
