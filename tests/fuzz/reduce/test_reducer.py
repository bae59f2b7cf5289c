"""The fixed-point loop: size order, acceptance rules, statistics, Ctrl-C, time budget, and
reducing a real finding of examples/wrong_cmpsel.py to a handful of instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.harness import INPUT, Finding
from fuzz.passes_under_test import python_pass, registered
from fuzz.reduce import DELTAS, Case, Reducer, SameFailure, size_of
from fuzz.reduce.reducer import choose_failure
from oracles.inputs import InputSet, random_input_sets

ROOT = Path(__file__).resolve().parents[3]

# About thirty instructions around one compare/select that wrong_cmpsel fuses wrongly.
PROGRAM = """\
func @victim(u0:ptr[256], u1:32, u2:32, u3:ptr[128]) {
entry:
  %tid:32 = get_sr sr=thread_id
  %a:32 = iadd %tid, u1 shift=1
  %b:32 = and %a, #63
  %c:32 = device_load u0, %b fmt=i32 shift=0
  %d:32 = imad %c, %tid, u2 shift=0
  %e:32 = xor %d, %a
  %f:16 = icmp %e, u2 cond=ult inv=0
  if_icmp %f, #0 cond=ueq inv=1 -> left, right
left:
  %g:32 = iadd %e, #7 shift=2
  %h:32 = asr %g, #3
  %i:32 = fadd %h, #0.5
  %i2:32 = fmul %i, %i.abs
  jump -> join
right:
  %j:32 = bitop %e, %c tt=0x6
  %k:32 = mov %j
  %l:32 = iadd %k, %tid shift=0
  jump -> join
join:
  %m:32 = phi [%i2, left], [%l, right]
  %n:16 = icmp %m, %tid cond=slt inv=1
  %o:32 = icmpsel %n, #0, %m, %e cond=ueq
  %p:32 = iadd %o, #1 shift=0
  %q:32 = and %tid, #31
  device_store %p, u3, %q fmt=i32 shift=0
  %s:32 = or %p, %a
  export %s slot=0
  export %o slot=1
  %t:16 = fcmp %m, #1.0 cond=lt inv=0
  %u:32 = icmpsel %t, #0, %p, %s cond=ueq
  export %u slot=2
  stop
}
"""


def wrong_cmpsel_case(seed: int = 1) -> Case:
    fn = parse_function(PROGRAM)
    wrong = python_pass(f"{ROOT}/examples/wrong_cmpsel.py:wrong_cmpsel")
    pipeline = (registered("copyprop"), wrong, registered("dce"))
    return Case(fn, tuple(random_input_sets(fn, 32, seed, 8)), pipeline)


def original_failure(case: Case) -> SameFailure:
    test = SameFailure()
    test.target = choose_failure(test.findings(case))
    assert test.target is not None
    return test


def has_icmpsel(case: Case) -> bool:
    return any(ins.name == "icmpsel" for ins in case.fn.instructions())


# --- size order -----------------------------------------------------------------------------


def test_size_order_instructions_then_blocks_then_threads_then_bytes_then_passes():
    case = wrong_cmpsel_case()
    size = size_of(case)
    assert size.instructions == 30 and size.blocks == 4 and size.threads == 8 * 32
    assert size.passes == 3
    fewer_threads = case.replace(inputs=case.inputs[:1])
    assert size_of(fewer_threads) < size
    shorter = case.replace(pipeline=case.pipeline[:1])
    assert size_of(shorter) < size and size_of(shorter)[:4] == size[:4]
    zeroed = case.replace(inputs=tuple(InputSet(s.threads, {}, {}) for s in case.inputs))
    assert size_of(zeroed).input_bytes == 0 and size_of(zeroed) < size
    assert size.describe().startswith("30 instructions, 4 blocks, 256 threads, ")
    assert size.describe().endswith(", 3 passes")


# --- the loop -------------------------------------------------------------------------------


def test_reduces_to_a_fixed_point_and_only_tests_verified_smaller_candidates():
    case = wrong_cmpsel_case()
    seen = []

    def interesting(candidate: Case) -> bool:
        assert not verify(candidate.fn)
        assert size_of(candidate) < size_of(seen[-1] if seen else case)
        return has_icmpsel(candidate)

    improvements = []
    reducer = Reducer(case, interesting, on_improve=improvements.append)
    best = reducer.run()
    assert not reducer.interrupted and not reducer.timed_out
    assert improvements and improvements[-1] is best
    lines = [line.strip() for line in print_function(best.fn).splitlines()[1:-1]]
    assert len(lines) == 3 and lines[0].endswith(":") and lines[2] == "stop"
    assert lines[1].endswith(":32 = icmpsel #0, #0, #0, #0 cond=ueq")
    assert best.pipeline == () and best.inputs == (InputSet(1, {}, {}),)
    assert print_function(case.fn).count("\n") == 36  # the original is untouched
    # A fixed point: a second reducer finds nothing more.
    again = Reducer(best, has_icmpsel)
    again.run()
    assert sum(stats.successes for stats in again.stats.values()) == 0


def test_statistics_cover_every_delta_pass():
    reducer = Reducer(wrong_cmpsel_case(), has_icmpsel)
    reducer.run()
    assert list(reducer.stats) == [delta.name for delta in DELTAS]
    for stats in reducer.stats.values():
        assert 0 <= stats.successes <= stats.attempts and stats.seconds >= 0
    assert reducer.stats["remove-instruction"].successes > 0
    assert reducer.stats["drop-passes"].successes == 3


def test_a_wrong_cmpsel_finding_reduces_to_at_most_8_instructions_failing_the_same_way():
    case = wrong_cmpsel_case()
    test = original_failure(case)
    assert (test.target.pass_name, test.target.oracle) == ("wrong_cmpsel:wrong_cmpsel",
                                                           "refinement")
    reducer = Reducer(case, test)
    best = reducer.run()
    assert best.fn.instruction_count() <= 8
    assert not verify(best.fn)
    # A fresh test, no memo: the reduced case still fails the same way.
    fresh = SameFailure(test.target)
    finding = fresh(best)
    assert finding is not None and finding.signature == test.target.signature
    assert [step.name for step in best.pipeline] == ["wrong_cmpsel:wrong_cmpsel"]
    assert len(best.inputs) == 1 and best.inputs[0].threads == 1
    assert reducer.finding is not None and reducer.finding.signature == test.target.signature


def test_ctrl_c_keeps_the_best_so_far():
    case = wrong_cmpsel_case()
    test = original_failure(case)
    calls = 0
    kept = []

    def interrupt_later(candidate: Case):
        nonlocal calls
        calls += 1
        if calls == 15:
            raise KeyboardInterrupt
        return test(candidate)

    reducer = Reducer(case, interrupt_later, on_improve=kept.append)
    best = reducer.run()
    assert reducer.interrupted and calls == 15
    assert kept and best is kept[-1]
    assert size_of(best) < size_of(case)
    assert SameFailure(test.target)(best) is not None


def test_time_budget_stops_with_the_best_so_far():
    case = wrong_cmpsel_case()
    reducer = Reducer(case, has_icmpsel, seconds=0)
    assert reducer.run() is case and reducer.timed_out


def test_focus_follows_the_failing_input_set():
    case = wrong_cmpsel_case()
    test = original_failure(case)
    reducer = Reducer(case, test, deltas=[d for d in DELTAS if d.name == "drop-passes"])
    best = reducer.run()
    assert best.focus is not None
    assert best.inputs[best.focus] == reducer.finding.input_set


# --- interestingness ------------------------------------------------------------------------


def test_same_failure_memoizes_and_needs_the_same_signature():
    case = wrong_cmpsel_case()
    test = original_failure(case)
    assert test(case) is not None and test(case) is not None
    assert test.calls == 1
    without_bug = case.replace(pipeline=(registered("copyprop"), registered("dce")))
    assert test(without_bug) is None


def test_a_harness_error_on_a_candidate_is_just_not_interesting():
    case = wrong_cmpsel_case()
    test = original_failure(case)
    # A buffer of the wrong length makes the interpreter refuse the inputs.
    broken = case.replace(inputs=(InputSet(1, {}, {"u0": b"\x00"}),))
    assert test(broken) is None and test.errors == 1


def finding(pass_name: str, oracle: str) -> Finding:
    return Finding(pass_name, oracle, "message", (), "")


@pytest.mark.parametrize(
    ("oracle", "expected"),
    [(None, ("dce", "refinement")), ("liveness", (INPUT, "liveness")), ("crash", None)],
)
def test_choose_failure_prefers_a_pass_and_honours_the_oracle(oracle, expected):
    findings = [finding(INPUT, "liveness"), finding("dce", "refinement")]
    chosen = choose_failure(findings, oracle)
    assert (chosen and (chosen.pass_name, chosen.oracle)) == expected
    assert choose_failure([finding(INPUT, "liveness")]).pass_name == INPUT


def test_an_attempt_budget_stops_the_reducer_at_that_many_candidates_whatever_the_clock():
    """A campaign reduces within a number of candidates, not seconds (fuzz/campaign.py
    `reduce_attempts`), so a seed's reproducer does not depend on the machine's load."""
    from agxir.text import parse_function
    from fuzz.reduce import Case, Reducer

    fn = parse_function(
        "func @f(u0:32) {\nentry:\n"
        + "".join(f"  %v{k}:32 = iadd u0, #{k} shift=0\n  export %v{k} slot={k}\n"
                  for k in range(6))
        + "  stop\n}\n")
    tested = []

    def interesting(case):
        tested.append(case)
        return True  # every smaller candidate still "fails"

    frozen = Reducer(Case(fn, (), ()), interesting, attempts=3, clock=lambda: 0.0)
    frozen.run()
    assert frozen.attempts == 3 == len(tested)
    assert frozen.timed_out
    unbounded = Reducer(Case(fn, (), ()), lambda case: True)
    unbounded.run()
    assert unbounded.attempts > 3 and not unbounded.timed_out
