"""dce: mark and sweep from side effects and terminators."""

from __future__ import annotations

from agxir.passes import get_pass
from agxir.text import parse_function, print_function
from agxir.verifier import verify


def apply(text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = get_pass("dce").run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


def test_removes_dead_chains_and_keeps_roots():
    changed, after = apply("""\
func @p(u0:32, u1:ptr[64]) {
b0:
  %tid:32 = get_sr sr=thread_id
  %a:32 = iadd %tid, u0 shift=0
  %b:32 = imul %a, %a
  %c:32 = iadd %tid, #1 shift=0
  device_store %c, u1, %tid fmt=i32 shift=0
  export %tid slot=0
  stop
}
""")
    assert changed
    assert (
        after
        == """\
func @p(u0:32, u1:ptr[64]) {
b0:
  %tid:32 = get_sr sr=thread_id
  %c:32 = iadd %tid, #1 shift=0
  device_store %c, u1, %tid fmt=i32 shift=0
  export %tid slot=0
  stop
}
"""
    )


def test_removes_unused_loads_get_sr_and_address_math():
    # Each of these may be undefined (out of bounds, overflow); dropping them is a refinement.
    changed, after = apply("""\
func @p(u0:32, u1:ptr[16]) {
b0:
  %tid:32 = get_sr sr=thread_id
  %l:32 = device_load u1, #1000 fmt=i32 shift=0
  %m:32 = amul u0, u0
  %s:32 = aadd u0, u0
  %k:16 = get_sr sr=thread_id
  stop
}
""")
    assert changed
    assert (
        after
        == """\
func @p(u0:32, u1:ptr[16]) {
b0:
  stop
}
"""
    )


def test_dead_phi_cycle_goes_live_loop_stays():
    changed, after = apply("""\
func @loop(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  jump -> head
head:
  %i:32 = phi [#0, entry], [%i2, body]
  %acc:32 = phi [u0, entry], [%acc2, body]
  %c:16 = icmp %i, #5 cond=ult inv=0
  if_icmp %c, #0 cond=ueq inv=1 -> body, exit
body:
  %i2:32 = iadd %i, #1 shift=0
  %acc2:32 = iadd %acc, %tid shift=0
  jump -> head
exit:
  export %i slot=0
  stop
}
""")
    assert changed
    assert (
        after
        == """\
func @loop(u0:32) {
entry:
  jump -> head
head:
  %i:32 = phi [#0, entry], [%i2, body]
  %c:16 = icmp %i, #5 cond=ult inv=0
  if_icmp %c, #0 cond=ueq inv=1 -> body, exit
body:
  %i2:32 = iadd %i, #1 shift=0
  jump -> head
exit:
  export %i slot=0
  stop
}
"""
    )


def test_nothing_dead_is_no_change():
    text = """\
func @p(u0:32) {
b0:
  %a:32 = iadd u0, #1 shift=0
  export %a slot=0
  stop
}
"""
    assert apply(text) == (False, text)


def test_instructions_in_unreachable_blocks_follow_the_same_rule():
    changed, after = apply("""\
func @p(u0:32) {
b0:
  stop
dead:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  export %a slot=0
  jump -> dead
}
""")
    assert changed
    assert "%b" not in after and "  %a:32 = iadd u0, #1 shift=0\n" in after
