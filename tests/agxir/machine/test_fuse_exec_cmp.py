"""fuse-exec-cmp: hand-written machine programs where each review condition must make the
pass decline (and the variant with that check off changes what the program computes), ones
where it must fuse (if, inverted if, fcmp, 16-bit result, while at n=1), and generated
programs through the machine pipeline and the pass under the verifier and wave refinement
against the SSA source."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.ir import clone_function
from agxir.machine.fuse_exec_cmp import PASS, Decline, FuseExecCmp, fuse_exec_cmp, live_out_halves
from agxir.machine.lower_cf import structurable
from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINE
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.zoo import exec_cmp_variants as zoo
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.outcomes import Returned, first_difference

INPUTS = [InputSet(4, {"u0": 2, "u1": 0x3FC00000})]


def _program(body: str, tail: str = "  export r3 slot=0\n", params: str = "u0:32, u1:32") -> str:
    """An if/else on `if_icmp r2, #0 ...` ending `body`; the then side adds 10 to r3, the
    else side 20, and the merge runs `tail`."""
    return f"""\
func.machine @t({params}) {{
b0: -> b1, else1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r3 = iadd r1, #1 shift=0
  r2 = mov_imm value=0x5
{body}b1: -> b2
  r3 = iadd r3, #10 shift=0
else1: -> b2
  else_icmp #0, #0 cond=ueq inv=0 n=1
  r3 = iadd r3, #20 shift=0
  pop_exec n=1
b2:
{tail}  stop
}}
"""


FUSES = _program("  r2 = icmp r1, u0 cond=ult inv=0\n  r4 = iadd r1, #5 shift=0\n"
                 "  if_icmp r2, #0 cond=ueq inv=1 n=1\n")  # fmt: skip


def _outputs(fn):
    (outcome,) = run_wave(fn, INPUTS, fuel=4000)
    return outcome


def _fused(text: str, pass_class=FuseExecCmp):
    fn = parse_function(text)
    assert verify(fn) == [], verify(fn)
    before = _outputs(fn)
    changed = fuse_exec_cmp(fn, pass_class)
    return fn, changed, before


def _assert_fuses(text: str, fused_line: str) -> None:
    fn, changed, before = _fused(text)
    assert changed
    assert verify(fn) == []
    lines = [line.strip() for line in print_function(fn).splitlines()]
    assert fused_line in lines
    assert not any(line.startswith(("r2 = icmp", "r2 = fcmp", "r2l = icmp")) for line in lines)
    assert first_difference(before, _outputs(fn)) is None


def _assert_declines(text: str, reason: str, variant=None) -> None:
    fn = parse_function(text)
    unchanged = print_function(fn)
    passes = FuseExecCmp(fn)
    assert not passes.run()
    assert print_function(fn) == unchanged
    assert any(reason in d.reason for d in passes.declined), passes.declined
    if variant is not None:  # the check switched off: the program computes something else
        wrong, changed, before = _fused(text, variant)
        assert changed
        assert first_difference(before, _outputs(wrong)) is not None


# --- where it must fuse ----------------------------------------------------------------------


def test_fuses_the_compare_into_the_branch_at_the_branch():
    _assert_fuses(FUSES, "if_icmp r1, u0 cond=ult inv=0 n=1")
    fn = parse_function(FUSES)
    PASS.run(fn)
    names = [ins.name for ins in fn.block_named("b0").instructions]
    assert names[-2:] == ["iadd", "if_icmp"]  # the instruction between stays before


def test_the_inverted_branch_inverts_the_compare():
    text = FUSES.replace("if_icmp r2, #0 cond=ueq inv=1", "if_icmp r2, #0 cond=ueq inv=0")
    _assert_fuses(text, "if_icmp r1, u0 cond=ult inv=1 n=1")
    text = FUSES.replace("cond=ult inv=0\n", "cond=ult inv=1\n", 1)
    _assert_fuses(text, "if_icmp r1, u0 cond=ult inv=1 n=1")


def test_an_fcmp_with_modifiers_becomes_if_fcmp():
    body = ("  r5 = convert r1 mode=u2f\n  r2 = fcmp r5.abs, u1 cond=lt inv=1\n"
            "  if_icmp r2, #0 cond=ueq inv=1 n=1\n")  # fmt: skip
    _assert_fuses(_program(body), "if_fcmp r5.abs, u1 cond=lt inv=1 n=1")


def test_a_16_bit_result_fuses():
    body = "  r2l = icmp r1, u0 cond=ult inv=0\n  if_icmp r2l, #0 cond=ueq inv=1 n=1\n"
    _assert_fuses(_program(body), "if_icmp r1, u0 cond=ult inv=0 n=1")


WHILE = """\
func.machine @w(u0:32) {
b0: -> b1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x0
b1: -> b2, exit
  r3 = icmp r2, r1 cond=ult inv=0
  r4 = iadd r2, #3 shift=0
  while_icmp r3, #0 cond=ueq inv=1 n=1
b2: -> b1
  r2 = iadd r2, #1 shift=0
  jmp_exec_any -> b1
  pop_exec n=1
exit:
  export r2 slot=0
  export r4 slot=1
  stop
}
"""


def test_the_break_if_at_nest_1_fuses():
    _assert_fuses(WHILE, "while_icmp r2, r1 cond=ult inv=0 n=1")


def test_a_while_at_nest_2_declines():
    # lanes at 0 < r0l < 2 test r3 too; they did not run the compare
    _assert_declines(WHILE.replace("inv=1 n=1", "inv=1 n=2"), "while at n > 1")


# --- each review condition: decline, and the variant without the check is wrong ------------


def test_1_an_exec_write_between_declines():
    # lanes 0..1 run the compare (lane 0: 1 < 3); pop_exec wakes lanes 2, 3, whose r2 is the
    # stale 0 the fused compare would replace by 2 < 3, 3 < 3
    text = """\
func.machine @e(u0:32) {
b0: -> b1, b2
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x0
  r3 = mov_imm value=0x7
  if_icmp r1, #2 cond=ult inv=0 n=1
b1: -> b2, b3
  r2 = icmp r1, #3 cond=ult inv=0
  pop_exec n=1
  if_icmp r2, #0 cond=ueq inv=1 n=1
b2: -> b3
  r3 = mov_imm value=0x9
  pop_exec n=1
b3:
  export r3 slot=0
  stop
}
"""
    _assert_declines(text, "pop_exec writes r0l", zoo.AcrossExecWrite)


def test_2_the_fused_branch_at_the_compare_runs_the_instructions_between_under_it():
    wrong, changed, before = _fused(FUSES.replace("r4 = iadd r1", "r3 = iadd r3"), zoo.AtCompare)
    assert changed
    assert any("follows the block's trailing if_icmp" in str(e) for e in verify(wrong))
    assert first_difference(before, _outputs(wrong)) is not None  # lanes 2, 3 skip the iadd


def test_3_a_source_redefined_between_declines():
    body = ("  r2 = icmp r1, u0 cond=ult inv=0\n  r1 = iadd r1, #2 shift=0\n"
            "  if_icmp r2, #0 cond=ueq inv=1 n=1\n")  # fmt: skip
    _assert_declines(_program(body), "redefines the compare's source r1", zoo.SourceRedefined)


@pytest.mark.parametrize(
    "write",
    ["  r1l = mov_imm value=0x0\n", "  r1h = mov_imm value=0x1\n", "  d0 = u2u64 u0\n"],
    ids=["low-half", "high-half", "64-bit"],
)
def test_3_a_half_or_a_64_bit_register_overlapping_a_source_declines(write):
    body = f"  r2 = icmp r1, u0 cond=ult inv=0\n{write}  if_icmp r2, #0 cond=ueq inv=1 n=1\n"
    if "d0" in write:  # d0 holds r0l: write d2 (r2, r3) over a compare on r3 instead
        body = ("  r4 = icmp r3, u0 cond=ult inv=0\n  d2 = u2u64 u0\n"
                "  if_icmp r4, #0 cond=ueq inv=1 n=1\n")  # fmt: skip
        _assert_declines(_program(body), "redefines the compare's source r3",
                         zoo.OverlappingHalfRedefined)  # fmt: skip
        return
    _assert_declines(_program(body), "redefines the compare's source r1", zoo.OverlappingHalfRedefined)


def test_4_a_result_read_after_the_branch_declines():
    body = "  r2 = icmp r1, u0 cond=ult inv=0\n  if_icmp r2, #0 cond=ueq inv=1 n=1\n"
    text = _program(body, "  export r3 slot=0\n  export r2 slot=1\n")
    _assert_declines(text, "r2 is read after the branch", zoo.ResultReadLater)


def test_4_a_result_read_on_one_path_only_declines():
    text = FUSES.replace("  r3 = iadd r3, #20 shift=0\n", "  r3 = iadd r3, r2 shift=0\n")
    _assert_declines(text, "r2 is read after the branch", zoo.ResultReadLater)


def test_4_a_result_read_between_declines():
    body = ("  r2 = icmp r1, u0 cond=ult inv=0\n  r3 = iadd r3, r2 shift=0\n"
            "  if_icmp r2, #0 cond=ueq inv=1 n=1\n")  # fmt: skip
    _assert_declines(_program(body), "iadd reads the compare's result r2")


def test_4_a_result_redefined_on_every_path_is_dead():
    text = FUSES.replace("b2:\n", "b2:\n  r2 = mov_imm value=0x4\n  export r2 slot=1\n")
    _assert_fuses(text, "if_icmp r1, u0 cond=ult inv=0 n=1")


def test_5_a_result_overlapping_r0l_declines():
    # invalid under control flow (the verifier says so), but the pass must not make it worse
    text = FUSES.replace("r2 = icmp", "r0l = icmp").replace("if_icmp r2,", "if_icmp r0l,")
    fn = parse_function(text)
    passes = FuseExecCmp(fn)
    assert not passes.run()
    assert any("overlaps r0l" in d.reason for d in passes.declined)
    # without check 5, check 4 still declines: the else's and the pop's update read r0l after
    # the branch, so a result in r0l is always live there (the variant is unreachable)
    wrong = zoo.ResultOverlapsExec(parse_function(text))
    assert not wrong.run()
    assert any("r0l is read after the branch" in d.reason for d in wrong.declined)

    class Neither(zoo.ResultOverlapsExec):
        CHECK_RESULT_DEAD = False

    assert fuse_exec_cmp(parse_function(text), Neither)


def test_6_the_walk_is_bounded_to_5_instructions():
    between = "".join(f"  r{4 + i} = iadd r1, #{i} shift=0\n" for i in range(6))
    body = f"  r2 = icmp r1, u0 cond=ult inv=0\n{between}  if_icmp r2, #0 cond=ueq inv=1 n=1\n"
    _assert_declines(_program(body), "no compare within 5 instructions")
    body = body.replace("  r9 = iadd r1, #5 shift=0\n", "")
    _assert_fuses(_program(body), "if_icmp r1, u0 cond=ult inv=0 n=1")


def test_6_the_walk_stays_in_its_block():
    # r3 = icmp in the preheader; the loop body redefines r3; the header's while tests it
    text = """\
func.machine @u(u0:32) {
b0: -> b1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x0
  r3 = icmp r2, r1 cond=ult inv=0
b1: -> b2, exit
  while_icmp r3, #0 cond=ueq inv=1 n=1
b2: -> b1
  r2 = iadd r2, #1 shift=0
  r3 = icmp r2, #2 cond=ult inv=0
  jmp_exec_any -> b1
  pop_exec n=1
exit:
  export r2 slot=0
  stop
}
"""
    _assert_declines(text, "no compare defines r3 in the block", zoo.UnboundedWalk)


def test_7_a_tested_register_written_by_another_instruction_declines():
    body = ("  r2 = icmp r1, u0 cond=ult inv=0\n  r2l = mov_imm value=0x1\n"
            "  if_icmp r2, #0 cond=ueq inv=1 n=1\n")  # fmt: skip
    _assert_declines(_program(body), "r2 is written by mov_imm, not a compare")
    body = ("  r2 = icmp r1, u0 cond=ult inv=0\n  r5 = icmp r1, #0 cond=ueq inv=0\n"
            "  if_icmp r2, #0 cond=ueq inv=1 n=1\n")  # fmt: skip
    wrong, changed, before = _fused(_program(body), zoo.NearestCompare)
    assert changed and first_difference(before, _outputs(wrong)) is not None
    _assert_fuses(_program(body), "if_icmp r1, u0 cond=ult inv=0 n=1")


def test_only_branches_on_a_register_against_zero_are_looked_at():
    text = FUSES.replace("if_icmp r2, #0 cond=ueq", "if_icmp r2, #1 cond=ueq")
    fn = parse_function(text)
    assert not PASS.run(fn)


def test_liveness_is_per_half_over_the_logical_successors():
    fn = parse_function(_program("  r2 = icmp r1, u0 cond=ult inv=0\n  if_icmp r2, #0 cond=ueq inv=1 n=1\n",
                                 "  export r3 slot=0\n  export r2l slot=1\n"))  # fmt: skip
    live = live_out_halves(fn)
    assert {4, 6, 7} <= live[fn.block_named("b0")]  # r2l, r3
    assert 5 not in live[fn.block_named("b0")]  # r2h is never read


# --- generated programs ----------------------------------------------------------------------


def _check_generated(seed: int, count: int) -> tuple[int, int]:
    config = CampaignConfig(seed=seed, pipelines=[])
    checked = fused = 0
    for index in range(count):
        fn, inputs = build_case(seed, index, config)
        if structurable(fn):
            continue
        source = clone_function(fn)
        for name in MACHINE_PIPELINE:
            MACHINE_PASSES[name].run(fn)
        passes = FuseExecCmp(fn)
        if passes.run():
            fused += 1
            while FuseExecCmp(fn).run():
                pass
        assert all(isinstance(d, Decline) for d in passes.declined)
        assert verify(fn) == [], (seed, index)
        expected = CompiledFunction(source).run(inputs)
        for want, got in zip(expected, run_wave(fn, inputs), strict=True):
            if isinstance(want, Returned):
                assert first_difference(want, got) is None, (seed, index)
        checked += 1
    return checked, fused


def test_generated_programs_fuse_and_still_compute_the_source():
    checked, fused = _check_generated(1, 40)
    assert checked >= 30 and fused >= 3


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 1 << 20))
def test_generated_programs_under_wave_refinement(seed):
    _check_generated(seed, 4)
