"""Issue 19: the refinement oracle gives a pass's output fuel relative to what its input
needed (oracles.outcomes.output_budget). A correct lowering that runs longer than the run's
fuel is not a finding; a pass that makes a loop run forever still is; an output that runs
out only walking code with no lane active is inconclusive and counted."""

from __future__ import annotations

from agxir.machine.lower_cf import lower_cf
from agxir.machine.out_of_ssa import out_of_ssa
from agxir.text import parse_function
from bench.programs import idle_walk_text
from bench.scale import nested_loops
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest, registered
from oracles.inputs import InputSet
from oracles.interp import DEFAULT_FUEL
from oracles.machine import run_wave
from oracles.outcomes import OutOfFuel, Returned, output_budget


def _pipeline(*names):
    return [registered(name) for name in names]


def test_five_nested_loops_lowered_need_more_than_the_fuel_and_are_no_finding():
    """The issue's case: u0 = 4, the SSA program returns within 10,000 instructions a
    thread, the lowered one (with out-of-SSA's copies) does not, and it is right."""
    fn = parse_function(nested_loops(5))
    sets = [InputSet(4, {"u0": 4})]
    lowered = parse_function(nested_loops(5))
    lower_cf(lowered)
    out_of_ssa(lowered)
    (short,) = run_wave(lowered, sets, fuel=DEFAULT_FUEL)
    assert isinstance(short, OutOfFuel)  # what the oracle used to report
    harness = Harness(sets, check_liveness=False)
    assert harness.check(fn, [_pipeline("lower-cf", "out-of-ssa")]) == []
    assert harness.stats.inconclusive == 0
    assert harness.stats.pass_changes["out-of-ssa"] == 1


def test_a_deep_nest_past_the_first_budget_is_retried_and_judged():
    """100 nested loops run once each: the wave walks every inner loop with no lane active
    at each level's last pass, ~4 x depth^2 steps, past the first budget; the retry has
    room, and the outputs are compared."""
    fn = parse_function(nested_loops(100))
    sets = [InputSet(2, {"u0": 1})]
    lowered = parse_function(nested_loops(100))
    lower_cf(lowered)
    harness = Harness(sets, check_liveness=False)
    (source,) = harness.outcomes(fn, "source")
    budget = output_budget(DEFAULT_FUEL, source.steps, lowered.instruction_count())
    (first,) = run_wave(lowered, sets, fuel=budget)
    assert isinstance(first, OutOfFuel) and first.active_steps <= budget
    assert harness.check(fn, [_pipeline("lower-cf")]) == []
    assert harness.stats.inconclusive == 0


def _never_exits(fn):
    """Wrong: the outer loop's test becomes `%i0 == %i0`, always true: at the SSA level
    the first target (into the loop) is always taken, at the exec level `while_icmp` keeps
    every lane in the loop."""
    for ins in fn.instructions():
        if ins.name in ("if_icmp", "while_icmp") and ins.srcs[1].ref.name == "u0":
            ins.srcs[1] = ins.srcs[0]
            ins.attrs.update(cond="ueq", inv=0)
            return True
    return False


def test_an_ssa_pass_that_makes_a_loop_run_forever_is_a_finding():
    fn = parse_function(nested_loops(2))
    harness = Harness([InputSet(2, {"u0": 3})], check_liveness=False)
    hang = PassUnderTest("never-exits", _never_exits, ("--pass", "t:never_exits"))
    (finding,) = harness.check(fn, [[hang]])
    assert (finding.pass_name, finding.oracle) == ("never-exits", "refinement")
    assert finding.message.startswith("input returned after ")
    assert "but output was still running after" in finding.message
    assert harness.stats.inconclusive == 0


def test_a_lowering_whose_lanes_never_leave_the_loop_is_a_finding():
    fn = parse_function(nested_loops(2))
    harness = Harness([InputSet(2, {"u0": 3})], check_liveness=False)
    hang = PassUnderTest("never-exits", _never_exits, ("--pass", "t:never_exits"))
    (finding,) = harness.check(fn, [[registered("lower-cf"), hang]])
    assert (finding.pass_name, finding.oracle) == ("never-exits", "refinement")
    assert "a lane active for" in finding.message


def test_an_output_out_of_fuel_with_no_lane_active_is_inconclusive_and_counted():
    fn = parse_function(idle_walk_text(2000))
    sets = [InputSet(2, {"u0": 300})]
    harness = Harness(sets, check_liveness=False)
    (source,) = harness.outcomes(fn, "source")
    assert isinstance(source, Returned) and source.steps < 1300
    assert harness.check(fn, [_pipeline("lower-cf")]) == []
    assert harness.stats.inconclusive == 1
    assert harness.stats.pass_changes["lower-cf"] == 1
