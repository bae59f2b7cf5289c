"""Round trips: canonical text prints back byte for byte, and printing is a fixed point."""

from __future__ import annotations

import pytest

from agxir.opcodes import BITOP_ALIASES, ROWS
from agxir.text import parse_function, print_function

INTEGER = """\
func @integer(u0:32, u1:16, u2:64) {
entry:
  %a:32 = iadd u0, u1.abs shift=0
  %b:32 = iadd %a, #3.neg shift=4
  %c:64 = imad %a, %b.abs, u2.abs.neg shift=1
  %d:16 = imul u1, #255
  %e:32 = bitop %a, %b tt=0x0
  %f:32 = bitop %a, %b tt=0xf
  %g:32 = bitop %a, #1 tt=0xa
  %h:32 = bitop %a, #0.abs tt=0x5
  %i:32 = and %a, %b
  %j:32 = or %a, %b
  %k:32 = xor %a, %b
  %l:32 = nor %a, %b
  %m:32 = nand %a, %b
  %n:32 = xnor %a, %b
  %o:32 = andn1 %a, %b
  %p:32 = andn2 %a, %b
  %q:32 = orn1 %a, %b
  %r:32 = orn2 %a, %b
  %s:32 = mov %r
  %t:32 = not %s
  %u:32 = bfi %a, %b, #4 mask=8
  %v:64 = bfeil %c, %b, #0 mask=64
  %w:16 = extr %d, u1, #7 mask=0
  %x:32 = asr %w, #31
  %y:64 = mov_imm value=0xffffffffffffffff
  %z:16 = mov_imm value=0x0
  %sx:32 = signext u1
  export %sx slot=7
  stop
}
"""

COMPARE = """\
func @compare(u0:32, u1:32) {
b0:
  %c0:16 = icmp u0, u1 cond=ueq inv=0
  %c1:32 = icmp u0.abs, #65535 cond=slt inv=1
  %c2:16 = fcmp u0, #-0.0 cond=eq inv=0
  %c3:32 = fcmp u0.abs.neg, #31.0 cond=gtn inv=1
  %s0:32 = icmpsel %c0, #0, u0, u1 cond=sgt
  %s1:64 = fcmpsel u1, #0.015625, %c3, #12 cond=ltn
  export %s1 slot=1
  if_fcmp %c2, #1.0 cond=ge inv=0 -> b1, b2
b1:
  if_icmp %s0, #0 cond=ugt inv=1 -> b2, b3
b2:
  jump -> b3
b3:
  stop
}
"""

FLOATS = """\
func @floats(u0:32, u1:16) {
start:
  %a:32 = fadd u0, #0.5
  %b:32 = fadd.sat %a.neg, u1.abs
  %c:16 = fmul %b, #-1.5
  %d:16 = fmul.sat u1, #0.0
  %e:32 = ffma %a, %b.abs, #-0.0
  %f:32 = ffma.sat %e, %e.neg, %e.abs.neg
  %g:16 = fmov %f
  %h:32 = fmov.sat #2.0
  %i:32 = convert u0 mode=u2f
  %j:16 = convert %i mode=s2f
  %k:32 = convert %j mode=f2u
  %l:32 = convert %k mode=f2s
  %m:16 = convert %l mode=f2f
  export %m slot=2
  stop
}
"""

MEMORY = """\
func @memory.load_store(buf:ptr[4096], out:ptr[16], n:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %tid16:16 = get_sr sr=thread_id
  %i:32 = amul %tid, #4
  %j:32 = aadd %i, n
  %w:64 = u2u64 %j
  %s:64 = i2i64 %tid16
  %p:64 = ulea buf, %i shift=0
  %q:64 = ilea %p, %j shift=31
  %x:32 = device_load buf, %tid fmt=i32 shift=0
  %y:16 = device_load %q, #65535 fmt=i8 shift=2
  %z:32 = device_load buf, %tid.abs fmt=i16 shift=1
  device_store %x, out, %tid fmt=i32 shift=0
  device_store %y, buf, #16 fmt=i8 shift=2
  export %w slot=3
  export %s slot=4
  export %z slot=5
  stop
}
"""

LOOP = """\
func @loop(n:32) {
entry:
  %zero:32 = mov_imm value=0x0
  jump -> head
head:
  %i:32 = phi [%zero, entry], [%next, body]
  %acc:32 = phi [#0, entry], [%sum, body]
  if_icmp %i, n cond=ult inv=0 -> body, exit
body:
  %sum:32 = iadd %acc, %i shift=0
  %next:32 = iadd %i, #1 shift=0
  jump -> head
exit:
  export %acc slot=0
  stop
}
"""

SAXPY = """\
func @saxpy(u0:ptr[256], u1:32, u2:16) {
block0:
  %tid:32 = get_sr sr=thread_id
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

EMPTY_UNIFORMS = """\
func @no_inputs() {
only:
  stop
}
"""

WAVE = """\
func @wave(u0:32, u1:16) {
b0:
  %x:32 = get_sr sr=thread_id
  %c0:16 = icmp %x, u0 cond=ult inv=0
  %m0:32 = ballot %c0
  %m1:32 = ballot #7
  %m2:32 = icmp_ballot %x, u1 cond=sgt inv=1
  %m3:32 = fcmp_ballot %x.neg, #0.5 cond=ltn inv=0
  %s0:32 = uadd_sat %m0.abs, u1.abs
  %s1:16 = uadd_sat u1, #200
  export %s0 slot=0
  export %s1 slot=1
  export %m1 slot=2
  export %m2 slot=3
  export %m3 slot=4
  stop
}
"""

CORPUS = {
    "wave": WAVE,
    "integer": INTEGER,
    "compare": COMPARE,
    "floats": FLOATS,
    "memory": MEMORY,
    "loop": LOOP,
    "saxpy": SAXPY,
    "empty_uniforms": EMPTY_UNIFORMS,
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_canonical_text_round_trips_byte_for_byte(name):
    text = CORPUS[name]
    assert print_function(parse_function(text, name)) == text


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_printing_is_a_fixed_point(name):
    once = print_function(parse_function(CORPUS[name]))
    assert print_function(parse_function(once)) == once


def test_corpus_covers_every_row():
    used = set()
    for name, text in CORPUS.items():
        fn = parse_function(text, name)
        used.update(ins.opcode.name for ins in fn.instructions())
    missing = [row.name for row in ROWS if row.name not in used]
    assert not missing, f"rows with no instruction in the corpus: {missing}"


def _mnemonics(text: str) -> set[str]:
    found = set()
    for line in text.splitlines():
        if line.startswith("  "):
            body = line.split(" = ", 1)[-1]
            found.add(body.split()[0].removesuffix(".sat"))
    return found


def test_corpus_spells_every_mnemonic_and_alias():
    spelled = set().union(*(_mnemonics(text) for text in CORPUS.values()))
    for row in ROWS:
        assert row.name in spelled, row.name
    for alias in BITOP_ALIASES:
        assert alias in spelled, alias


NON_CANONICAL = """\
; leading comment

func   @loop( n : 32 )   {   ; header comment
entry:  ; label comment
    %zero:32=mov_imm value=0      ; decimal for a hex attribute
\tjump->head
head:
  %i:32 = phi [ %zero , entry ] , [%next,body]
  %acc:32 = phi [#0x0, entry], [%sum, body]
  if_icmp %i, n inv=0 cond=ult -> body,exit

body:
  %sum:32 = iadd %acc, %i shift=0x0
  %next:32 = iadd %i, #0x1 shift=0
  jump -> head
exit:
  export %acc slot=0
  stop
}
; trailing comment

"""


def test_non_canonical_text_prints_canonically():
    assert print_function(parse_function(NON_CANONICAL)) == LOOP


def test_hex_buffer_sizes_and_immediates_print_in_decimal():
    text = "func @f(b:ptr[0x10]) {\nb0:\n  export #0x10 slot=0\n  stop\n}\n"
    assert print_function(parse_function(text)) == (
        "func @f(b:ptr[16]) {\nb0:\n  export #16 slot=0\n  stop\n}\n"
    )


def test_modifier_order_and_bitop_spellings_normalize():
    text = """\
func @f(u:32) {
b:
  %a:32 = iadd u.neg.abs, #1 shift=0
  %b:32 = bitop %a, u tt=8
  %c:32 = bitop %a, #0 tt=10
  %d:32 = bitop %a, #0x0 tt=0x5
  %e:32 = fadd %d, #1
  stop
}
"""
    assert print_function(parse_function(text)) == """\
func @f(u:32) {
b:
  %a:32 = iadd u.abs.neg, #1 shift=0
  %b:32 = and %a, u
  %c:32 = mov %a
  %d:32 = not %a
  %e:32 = fadd %d, #1.0
  stop
}
"""


def test_comment_only_lines_and_no_trailing_newline():
    text = "func @f() {\nb:\n  stop ; done\n}"
    assert print_function(parse_function(text)) == "func @f() {\nb:\n  stop\n}\n"
