"""Each delta pass alone, on small hand-written functions: its candidates verify and are
what the pass says; and no delta ever changes the case it was given."""

from __future__ import annotations

import pytest

from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.passes_under_test import registered
from fuzz.reduce import DELTAS, Case, delta_named
from fuzz.reduce.deltas import fits, smaller_ints, tidy
from oracles.inputs import InputSet

DIAMOND = """\
func @diamond(u0:32, u1:ptr[64]) {
entry:
  %tid:32 = get_sr sr=thread_id
  %c:16 = icmp %tid, u0 cond=ult inv=0
  if_icmp %c, #0 cond=ueq inv=1 -> left, right
left:
  %x:32 = iadd %tid, #5 shift=0
  jump -> join
right:
  %y:32 = and %tid, u0
  jump -> join
join:
  %p:32 = phi [%x, left], [%y, right]
  export %p slot=0
  stop
}
"""

STRAIGHT = """\
func @straight(u0:32, u1:32, u2:ptr[256]) {
entry:
  %a:32 = get_sr sr=thread_id
  %b:32 = iadd %a, u0 shift=2
  %c:32 = imad %b, %a, #3 shift=0
  %d:32 = xor %c, %b
  %e:32 = device_load u2, %a.abs fmt=i32 shift=0
  %f:32 = fadd.sat %e.abs.neg, #0.5
  %g:16 = icmp %d, #12 cond=ugt inv=1
  %h:32 = icmpsel %g, #0, %d, %f cond=ueq
  export %h slot=3
  stop
}
"""

CHAIN = """\
func @chain(u0:32) {
entry:
  %a:32 = get_sr sr=thread_id
  jump -> middle
middle:
  %b:32 = iadd %a, u0 shift=0
  jump -> last
last:
  export %b slot=0
  stop
}
"""

BYPASS = """\
func @bypass(u0:32) {
entry:
  %a:32 = get_sr sr=thread_id
  if_icmp %a, u0 cond=ult inv=0 -> work, skip
work:
  %b:32 = iadd %a, #1 shift=0
  jump -> join
skip:
  jump -> join
join:
  %p:32 = phi [%b, work], [#7, skip]
  export %p slot=0
  stop
}
"""

LOOP = """\
func @loop(u0:32) {
entry:
  %zero:32 = mov_imm value=0x0
  jump -> head
head:
  %i:32 = phi [%zero, entry], [%next, head]
  %next:32 = iadd %i, #1 shift=0
  if_icmp %next, u0 cond=ult inv=0 -> head, exit
exit:
  export %next slot=0
  stop
}
"""

PROGRAMS = [DIAMOND, STRAIGHT, CHAIN, BYPASS, LOOP]


def case_of(text: str, *, sets=None, pipeline=("copyprop", "cmpsel", "dce")) -> Case:
    fn = parse_function(text)
    if sets is None:
        scalars = {u.name: 3 for u in fn.uniforms if not u.is_buffer}
        buffers = {u.name: bytes(1 + i % 255 for i in range(u.buffer_bytes))
                   for u in fn.uniforms if u.is_buffer}
        sets = (InputSet(4, scalars, buffers),)
    return Case(fn, tuple(sets), tuple(registered(name) for name in pipeline))


def candidates(name: str, case: Case) -> list[Case]:
    return list(delta_named(name).candidates(case))


def texts(found: list[Case]) -> list[str]:
    return [print_function(c.fn) for c in found]


def body(case: Case) -> list[str]:
    return [line.strip() for line in print_function(case.fn).splitlines()[1:-1]]


def assert_all_verify(found: list[Case]) -> None:
    for candidate in found:
        errors = verify(candidate.fn)
        assert not errors, f"{errors}\n{print_function(candidate.fn)}"


# --- every delta ----------------------------------------------------------------------------


@pytest.mark.parametrize("delta", DELTAS, ids=lambda d: d.name)
@pytest.mark.parametrize("text", PROGRAMS, ids=lambda t: t.split("@")[1].split("(")[0])
def test_deltas_leave_their_input_alone_and_yield_smaller_whole_cases(delta, text):
    case = case_of(text, sets=(InputSet(8, {}, {}), InputSet(2, {}, {})))
    before = print_function(case.fn)
    found = list(delta.candidates(case))
    assert print_function(case.fn) == before  # candidates are clones, never edits
    for candidate in found:
        assert candidate.fn is not case.fn or candidate.inputs != case.inputs or (
            candidate.pipeline != case.pipeline
        )
        assert len(candidate.fn.uniforms) == len({u.name for u in candidate.fn.uniforms})


def test_names_are_unique_and_looked_up():
    names = [d.name for d in DELTAS]
    assert len(names) == len(set(names))
    assert delta_named("remove-block").name == "remove-block"
    with pytest.raises(KeyError):
        delta_named("nope")


# --- pipeline and inputs --------------------------------------------------------------------


def test_drop_passes_removes_each_pass_last_first():
    found = candidates("drop-passes", case_of(CHAIN))
    assert [[p.name for p in c.pipeline] for c in found] == [
        ["copyprop", "cmpsel"], ["copyprop", "dce"], ["cmpsel", "dce"]]


def test_shrink_threads_tries_the_failing_set_alone_first():
    sets = (InputSet(8, {}, {}), InputSet(6, {}, {}), InputSet(4, {}, {}))
    case = case_of(CHAIN, sets=sets).replace(focus=1)
    found = candidates("shrink-threads", case)
    assert found[0].inputs == (sets[1],) and found[0].focus == 0
    dropped = [c for c in found[1:4]]
    assert [len(c.inputs) for c in dropped] == [2, 2, 2]
    assert [c.focus for c in dropped] == [1, None, 0]
    threads = [c.inputs[0].threads for c in found[4:] if c.inputs[1:] == sets[1:]]
    assert threads == [1, 4, 6, 7]


def test_shrink_inputs_moves_scalars_toward_zero_and_zeroes_buffers_in_runs():
    case = case_of(DIAMOND, sets=(InputSet(1, {"u0": 0b1010}, {"u1": bytes([1] * 64)}),))
    found = candidates("shrink-inputs", case)
    same_buffers = [c for c in found if c.inputs[0].buffers == case.inputs[0].buffers]
    scalars = [c.inputs[0].scalars["u0"] for c in same_buffers]
    assert scalars == [0, 0b0010, 0b1000, 0b0101, 0b1001]
    buffers = [c.inputs[0].buffers["u1"] for c in found if c.inputs[0].scalars["u0"] == 0b1010]
    assert buffers[0] == bytes(64)  # the whole buffer first
    assert buffers[1] == bytes(32) + bytes([1] * 32)
    assert all(len(b) == 64 for b in buffers)
    assert len(buffers) == 1 + 2 + 4 + 8 + 16 + 32 + 64  # down to single bytes
    assert_all_verify(found)


def test_smaller_ints_keeps_a_high_bit_while_clearing_the_rest():
    assert smaller_ints(0xF300) == [0, 0x7300, 0xB300, 0xD300, 0xE300, 0xF100, 0xF200,
                                    0x7980, 0xF2FF]
    assert smaller_ints(3, floor=1) == [1, 2]
    assert smaller_ints(0) == []


def test_remove_uniforms_drops_only_unread_ones_and_their_inputs():
    text = CHAIN.replace("(u0:32)", "(u0:32, u9:16, u8:ptr[16])")
    case = case_of(text)
    found = candidates("remove-uniforms", case)
    assert [[u.name for u in c.fn.uniforms] for c in found] == [["u0", "u8"], ["u0", "u9"]]
    assert "u9" not in found[0].inputs[0].scalars and "u8" in found[0].inputs[0].buffers
    assert "u8" not in found[1].inputs[0].buffers
    assert_all_verify(found)


def test_shrink_buffers_declares_smaller_buffers_and_truncates_inputs():
    found = candidates("shrink-buffers", case_of(STRAIGHT))
    assert [c.fn.uniforms[2].buffer_bytes for c in found] == [4, 16, 64, 128]
    for candidate in found:
        size = candidate.fn.uniforms[2].buffer_bytes
        assert len(candidate.inputs[0].buffers["u2"]) == size
        assert f"u2:ptr[{size}]" in print_function(candidate.fn)
        assert "device_load u2," in print_function(candidate.fn)
    assert_all_verify(found)


# --- control flow ---------------------------------------------------------------------------


def test_remove_block_redirects_branches_and_drops_phi_sources():
    found = candidates("remove-block", case_of(DIAMOND))
    assert_all_verify(found)
    without_right = [c for c in found if "right:" not in print_function(c.fn)]
    assert without_right
    lines = body(without_right[0])
    assert "jump -> left" in lines
    assert "%p:32 = phi [%x, left]" in lines
    # Removing `join` turns both jumps into it into `stop`.
    without_join = [c for c in found if "join:" not in print_function(c.fn)]
    assert without_join and body(without_join[0]).count("stop") == 2


def test_straighten_branch_takes_either_side_or_stops():
    found = candidates("straighten-branch", case_of(DIAMOND))
    assert_all_verify(found)
    first = texts(found)
    assert any("jump -> left" in t and "right:" not in t for t in first)  # pruned
    assert any("jump -> left" in t and "right:" in t for t in first)  # not pruned
    assert any("jump -> right" in t and "left:" not in t for t in first)
    entry_stops = [t for t in first if t.split("left:")[0].rstrip().endswith("stop")]
    assert entry_stops


def test_straighten_branch_cuts_a_loop_back_edge():
    found = candidates("straighten-branch", case_of(LOOP))
    assert_all_verify(found)
    cut = [c for c in found if "if_icmp" not in print_function(c.fn)]
    # head -> exit only: the phi keeps just its entry source.
    assert any("%i:32 = phi [%zero, entry]" in body(c) for c in cut)


def test_merge_blocks_folds_a_block_into_its_only_predecessor():
    found = candidates("merge-blocks", case_of(CHAIN))
    assert_all_verify(found)
    assert body(found[0]) == [
        "entry:", "%a:32 = get_sr sr=thread_id", "jump -> middle",
        "middle:", "%b:32 = iadd %a, u0 shift=0", "export %b slot=0", "stop"]
    assert len(found[1].fn.blocks) == 2 and found[1].fn.blocks[0].name == "entry"


def test_merge_blocks_bypasses_a_jump_only_block():
    found = candidates("merge-blocks", case_of(BYPASS))
    assert_all_verify(found)
    bypassed = [c for c in found if "skip:" not in print_function(c.fn)]
    assert len(bypassed) == 1
    lines = body(bypassed[0])
    assert "if_icmp %a, u0 cond=ult inv=0 -> work, join" in lines
    assert "%p:32 = phi [#7, entry], [%b, work]" in lines  # predecessor order


# --- instructions and operands --------------------------------------------------------------


def test_remove_instruction_with_its_readers_then_alone():
    case = case_of(STRAIGHT)
    found = candidates("remove-instruction", case)
    assert_all_verify(found)
    # First %a with everything reading it, transitively (the export too), then %a alone,
    # its readers given #0 where the row takes an immediate.
    assert body(found[0]) == ["entry:", "stop"]
    assert found[1].fn.instruction_count() == case.fn.instruction_count() - 1
    assert "%b:32 = iadd #0, u0 shift=2" in body(found[1])
    assert "%c:32 = imad %b, #0, #3 shift=0" in body(found[1])
    # A branch reading a removed value stays, reading a stand-in.
    diamond = candidates("remove-instruction", case_of(DIAMOND))
    assert_all_verify(diamond)
    assert "if_icmp #0, #0 cond=ueq inv=1 -> left, right" in body(diamond[0])
    # A device_load's ADDR base never gets an immediate.
    assert all("device_load #" not in t for t in texts(found))


def test_remove_chunk_removes_halving_runs():
    case = case_of(STRAIGHT)
    found = candidates("remove-chunk", case)
    assert_all_verify(found)
    counts = [case.fn.instruction_count() - c.fn.instruction_count() for c in found]
    assert counts[:2] == [4, 4] and set(counts[2:]) == {2}


def test_remove_phi_uses_each_source():
    found = candidates("remove-phi", case_of(DIAMOND))
    assert [("export %x slot=0" in body(c), "export %y slot=0" in body(c)) for c in found] == [
        (True, False), (False, True)]
    assert all("phi" not in print_function(c.fn) for c in found)
    # %x does not dominate join: the verifier would reject that one, and the reducer does.
    assert [bool(verify(c.fn)) for c in found] == [True, True]


def test_replace_operand_respects_the_source_specs():
    case = case_of(STRAIGHT)
    found = candidates("replace-operand", case)
    assert_all_verify(found)
    lines = [set(body(c)) - set(body(case)) for c in found]
    changed = [next(iter(diff)) for diff in lines if len(diff) == 1]
    assert "%b:32 = iadd #0, u0 shift=2" in changed  # a constant
    assert "%b:32 = iadd u0, u0 shift=2" in changed  # a uniform
    assert "%d:32 = xor %a, %b" in changed  # bypassing %c to its operand %a
    assert "%e:32 = device_load u2, #0 fmt=i32 shift=0" in changed
    assert not any(line.startswith("%e:32 = device_load #") for line in changed)
    assert not any("u2" in line and "iadd" in line for line in changed)  # 64-bit into 32


def test_fits_reads_the_row():
    fn = parse_function(STRAIGHT)
    load = fn.blocks[0].instructions[4]
    u0, _, u2 = fn.uniforms
    from agxir.ir import Immediate

    assert not fits(load, 0, Immediate(0)) and fits(load, 0, u2) and not fits(load, 0, u0)
    assert fits(load, 1, Immediate(0)) and fits(load, 1, u0)


def test_shrink_constants_shrinks_immediates_and_attributes():
    case = case_of(STRAIGHT)
    found = candidates("shrink-constants", case)
    assert_all_verify(found)
    changed = [next(iter(set(body(c)) - set(body(case)))) for c in found]
    assert "%b:32 = iadd %a, u0 shift=0" in changed
    assert "%c:32 = imad %b, %a, #0 shift=0" in changed
    assert "%g:16 = icmp %d, #4 cond=ugt inv=1" in changed  # bit 3 of 12 cleared
    assert "%g:16 = icmp %d, #12 cond=ueq inv=1" in changed  # the first condition
    assert "%g:16 = icmp %d, #12 cond=ugt inv=0" in changed
    assert "export %h slot=0" in changed
    assert "%f:32 = fadd.sat %e.abs.neg, #0.0" in changed


def test_drop_modifiers_removes_one_at_a_time():
    case = case_of(STRAIGHT)
    found = candidates("drop-modifiers", case)
    assert_all_verify(found)
    changed = [next(iter(set(body(c)) - set(body(case)))) for c in found]
    assert changed == [
        "%e:32 = device_load u2, %a fmt=i32 shift=0",
        "%f:32 = fadd %e.abs.neg, #0.5",
        "%f:32 = fadd.sat %e.neg, #0.5",
        "%f:32 = fadd.sat %e.abs, #0.5",
    ]


def test_tidy_fills_dangling_uses_and_reorders_phis():
    fn = parse_function(BYPASS)
    work = fn.blocks[1]
    work.instructions.pop(0)  # %b's definition goes
    assert tidy(fn)
    assert "%p:32 = phi [#0, work], [#7, skip]" in print_function(fn)
    assert not verify(fn)


def test_dropping_passes_keeps_what_a_later_mesa_pass_needs_before_it():
    """agx_ra's contract is DCE first: a pipeline without mesa:dce is no reduction of a
    finding of mesa:ra (Mesa's allocator may leave a dead read stale there, no bug)."""
    from agxir.text import parse_function
    from fuzz.passes_under_test import PassUnderTest
    from fuzz.reduce.deltas import Case, drop_passes

    def unit(name):
        return PassUnderTest(name, lambda fn: False, ("--passes", name))

    fn = parse_function("func @f() {\nb0:\n  stop\n}\n")
    names = ["lower-cf", "mesa:dce", "mesa:ra", "mesa:lower-copies"]
    case = Case(fn, (), tuple(unit(n) for n in names))
    assert [[u.name for u in c.pipeline] for c in drop_passes(case)] == [names[:3]]
    plain = Case(fn, (), tuple(unit(n) for n in ["copyprop", "dce"]))
    assert len(list(drop_passes(plain))) == 2
