"""reuse-conversion (seed 002): fires and declines on small programs, keeps what they
compute through the vreg route (wave interpreter, verifier, RA checker), and on generated
programs agrees with the SSA source."""

from __future__ import annotations

import pytest

from agxir.ir import Register, VirtualRegister, clone_function
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.machine.lower_copies import lower_copies
from agxir.machine.out_of_ssa import out_of_ssa
from agxir.machine.reuse_conversion import PASS, decisions
from agxir.machine.vreg_alloc import interference, vreg_liveness, vreg_ra
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.machine.ra_checker import check_allocation
from oracles.outcomes import Returned, first_difference

INPUTS = [InputSet(8, {"u0": 5})]

# The source dies at the conversion; the result is read twice.
STRAIGHT = """\
func.vreg @straight(u0:32) {
b0:
  v1:32 = get_sr sr=thread_id
  v2:32 = convert v1:32 mode=u2f
  v3:16 = convert v2:32 mode=f2f
  v4:16 = fadd v3:16, v3:16
  export v4:16 slot=0
  export v3:16 slot=1
  stop
}
"""

# The source (defined before the loop) is converted in the loop: read again next iteration.
LOOP = """\
func @loop(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %f:32 = convert %tid mode=u2f
  %zero:16 = mov_imm value=0x0
  %z32:32 = mov_imm value=0x0
  jump -> loop
loop:
  %i:32 = phi [%z32, entry], [%next, loop]
  %acc:16 = phi [%zero, entry], [%acc2, loop]
  %h:16 = convert %f mode=f2f
  %acc2:16 = fadd %acc, %h
  %next:32 = iadd %i, #1 shift=0
  if_icmp %next, #3 cond=ult inv=0 -> loop, exit
exit:
  export %acc2 slot=0
  stop
}
"""

# The source is defined in the loop body and dies at the conversion: reuse is fine.
LOOP_BODY = LOOP.replace("  %h:16 = convert %f mode=f2f\n",
                         "  %g:32 = convert %i mode=u2f\n  %h:16 = convert %g mode=f2f\n")

# The source is read after the conversion, in a later block.
LATER_BLOCK = """\
func @later(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %f:32 = convert %tid mode=u2f
  %h:16 = convert %f mode=f2f
  %g:16 = fadd %h, %h
  if_icmp %tid, #2 cond=ult inv=0 -> small, join
small:
  jump -> join
join:
  %r:32 = fadd %f, %f
  export %r slot=0
  export %g slot=1
  stop
}
"""

# The source is read on the other side of an if: the lanes there are inactive while the
# conversion writes, and keep it.
OTHER_SIDE = """\
func @sides(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %f:32 = convert %tid mode=u2f
  if_icmp %tid, #2 cond=ult inv=0 -> a, b
a:
  %h:16 = convert %f mode=f2f
  %x:32 = convert %h mode=f2f
  jump -> join
b:
  %y:32 = fadd %f, %f
  jump -> join
join:
  %r:32 = phi [%x, a], [%y, b]
  export %r slot=0
  stop
}
"""

# Another definition of the result reaches the same read (an out-of-SSA copy coalesced
# with the conversion: v6 is written on both edges into join).
SHARED_WEB = """\
func.vreg @web(u0:32) {
entry: -> small, else1
  r0l = mov_imm value=0x0
  v1:32 = get_sr sr=thread_id
  v2:32 = convert v1:32 mode=u2f
  v3:16 = mov_imm value=0x3c00
  if_icmp v1:32, #2 cond=ult inv=0 n=1
small: -> join
  v6:16 = convert v2:32 mode=f2f
else1: -> join
  else_icmp #0, #0 cond=ueq inv=0 n=1
  v6:16 = parallel_copy v3:16
  pop_exec n=1
join:
  v5:16 = parallel_copy v6:16
  export v5:16 slot=0
  stop
}
"""

# The result's vreg has an earlier definition, read while the source is still live: only
# this definition's live range may be renamed (the historic patch renamed both).
EARLIER_DEF = """\
func.vreg @earlier(u0:32) {
b0:
  v1:32 = get_sr sr=thread_id
  v2:32 = convert v1:32 mode=u2f
  v9:16 = mov_imm value=0x3c00
  export v9:16 slot=1
  v9:16 = convert v2:32 mode=f2f
  export v9:16 slot=0
  stop
}
"""

# The source is redefined while the result is still live.
REDEFINED = """\
func.vreg @redefined(u0:32) {
b0:
  v1:32 = get_sr sr=thread_id
  v2:32 = convert v1:32 mode=u2f
  v9:16 = convert v2:32 mode=f2f
  v2:32 = iadd v1:32, #1 shift=0
  export v9:16 slot=0
  export v2:32 slot=1
  stop
}
"""

# A narrow write into the source leaves its high half alive, and a wide read follows.
NARROW_WRITE = """\
func.vreg @narrow(u0:32) {
b0:
  v1:32 = get_sr sr=thread_id
  v2:32 = imad v1:32, u0, #7 shift=4
  v9:16 = convert v2:32 mode=u2f
  export v9:16 slot=0
  v2:16 = mov_imm value=0x7
  export v2:32 slot=1
  stop
}
"""


def _vreg(text: str):
    fn = parse_function(text)
    if fn.level == "ssa":
        lower_cf(fn)
        out_of_ssa(fn)
    assert fn.level == "vreg" and verify(fn) == []
    return fn


def _allocated(fn):
    allocated = clone_function(fn)
    vreg_ra(allocated)
    assert verify(allocated) == []
    assert check_allocation(fn, allocated) == []
    lower_copies(allocated)
    return allocated


def _same_outcomes(before, after, inputs=INPUTS) -> None:
    for source, target in zip(run_wave(before, inputs), run_wave(after, inputs), strict=True):
        assert isinstance(source, Returned)
        assert first_difference(source, target) is None


def test_the_result_becomes_the_low_half_of_the_dying_source():
    before = _vreg(STRAIGHT)
    fn = clone_function(before)
    assert PASS.run(fn)
    text = print_function(fn)
    assert "v2:16 = convert v2:32 mode=f2f" in text
    assert "v4:16 = fadd v2:16, v2:16" in text and "export v2:16 slot=1" in text
    assert "v3:16" not in text and verify(fn) == []
    _same_outcomes(before, fn)
    allocated = _allocated(fn)
    _same_outcomes(before, allocated)
    convert = [ins for ins in allocated.instructions() if ins.name == "convert"][1]
    source = convert.srcs[0].ref
    assert isinstance(source, Register) and convert.dest == Register(source.half, 16)
    assert not PASS.run(fn)  # nothing left to do


def test_the_vreg_level_allocates_an_index_at_its_widest_size():
    fn = _vreg(STRAIGHT)
    PASS.run(fn)
    graph = interference(fn)
    assert VirtualRegister(2, 32) in graph and VirtualRegister(2, 16) not in graph
    assert all(v.size == 32 or v.index != 2 for live in vreg_liveness(fn).values() for v in live)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (LOOP, "is read again after the conversion"),
        (LATER_BLOCK, "is read again after the conversion"),
        (SHARED_WEB, "is reached by another definition of it"),
        (REDEFINED, "is written while v9 is live"),
        (NARROW_WRITE, "is read again after the conversion"),
    ],
    ids=["back-edge", "later-block", "shared-web", "redefined", "narrow-write"],
)
def test_the_pass_declines_and_says_why(text, why):
    fn = _vreg(text)
    before = print_function(fn)
    made = decisions(fn)
    assert made and not any(d.reused for d in made)
    assert any(why in d.why for d in made), made
    assert print_function(fn) == before


@pytest.mark.parametrize("text", [LOOP_BODY, OTHER_SIDE, EARLIER_DEF], ids=["loop-body", "other-side", "earlier-def"])
def test_the_pass_fires_where_it_is_safe_and_keeps_the_results(text):
    before = _vreg(text)
    fn = clone_function(before)
    made = decisions(fn)
    assert any(d.reused for d in made), made
    assert verify(fn) == []
    _same_outcomes(before, fn)
    _same_outcomes(before, _allocated(fn))


def test_only_this_definitions_live_range_is_renamed():
    fn = _vreg(EARLIER_DEF)
    PASS.run(fn)
    text = print_function(fn)
    assert "v9:16 = mov_imm value=0x3c00" in text and "export v9:16 slot=1" in text
    assert "v2:16 = convert v2:32 mode=f2f" in text and "export v2:16 slot=0" in text


def test_a_narrow_write_keeps_the_high_half_on_the_wave():
    fn = _vreg(NARROW_WRITE)
    (outcome,) = run_wave(fn, [InputSet(4, {"u0": 3})])
    wide = [(tid * 3 + (7 << 4)) & 0xFFFFFFFF for tid in range(4)]
    assert [thread[1] for thread in outcome.outputs] == [(w & 0xFFFF0000) | 7 for w in wide]


def test_it_takes_vreg_functions_only():
    with pytest.raises(ValueError, match="vreg-level"):
        PASS.run(parse_function(LOOP))


def test_generated_programs_through_the_vreg_route_with_reuse_agree_with_the_source():
    config = CampaignConfig(seed=7, pipelines=[])
    fired = checked = 0
    for index in range(60):
        fn, inputs = build_case(7, index, config)
        if structurable(fn):
            continue
        vreg_fn = clone_function(fn)
        lower_cf(vreg_fn)
        out_of_ssa(vreg_fn)
        fired += PASS.run(vreg_fn)
        assert verify(vreg_fn) == [], index
        allocated = clone_function(vreg_fn)
        vreg_ra(allocated)
        assert verify(allocated) == [] and check_allocation(vreg_fn, allocated) == [], index
        lower_copies(allocated)
        for source, target in zip(CompiledFunction(fn).run(inputs), run_wave(allocated, inputs), strict=True):
            if isinstance(source, Returned):
                assert first_difference(source, target) is None, index
        checked += 1
    assert checked >= 40 and fired >= 3
