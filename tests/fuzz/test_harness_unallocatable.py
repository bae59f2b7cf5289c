"""Issue 19: a program whose register demand exceeds the file is declined by the allocators
(no spilling, like Mesa 23.3.6) and counted as not allocatable, never a crash finding; an
allocator that gives up below the bound has crashed."""

from __future__ import annotations

from agxir.machine.regalloc import RegisterBoundExceeded
from agxir.text import parse_function
from bench.scale import nested_loops
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest, registered
from oracles.inputs import InputSet

SETS = [InputSet(2, {"u0": 0})]


def test_a_loop_nest_over_the_register_file_is_not_allocatable_not_a_crash():
    fn = parse_function(nested_loops(150))  # 150 live 32-bit counters: 300 halves
    harness = Harness(SETS, check_liveness=False)
    pipelines = [[registered(n) for n in ("lower-cf", "ra", "lower-phis")],
                 [registered(n) for n in ("lower-cf", "ra-demand")],
                 [registered(n) for n in ("lower-cf", "out-of-ssa", "vreg-ra")]]
    assert harness.check(fn, pipelines) == []
    assert harness.stats.unallocatable == 1  # once per program, whatever the pipelines
    assert harness.stats.pass_runs["lower-cf"] == 3
    assert "ra" not in harness.stats.pass_runs


def test_a_nest_within_the_file_is_allocated_and_checked():
    fn = parse_function(nested_loops(100))  # 200 halves and r0l: fits
    harness = Harness(SETS, check_liveness=False)
    pipeline = [registered(n) for n in ("lower-cf", "ra", "lower-phis", "lower-copies")]
    assert harness.check(fn, [pipeline]) == []
    assert harness.stats.unallocatable == 0
    assert harness.stats.pass_runs["lower-copies"] == 1


def test_an_allocator_that_gives_up_below_the_bound_has_crashed():
    def timid_ra(fn):
        raise RegisterBoundExceeded("no room, it says")

    fn = parse_function(nested_loops(3))
    harness = Harness(SETS, check_liveness=False)
    pipeline = [registered("lower-cf"), PassUnderTest("timid-ra", timid_ra, ("--pass", "t:x"))]
    (finding,) = harness.check(fn, [pipeline])
    assert (finding.pass_name, finding.oracle) == ("timid-ra", "crash")
    assert "RegisterBoundExceeded" in finding.message
    assert harness.stats.unallocatable == 0


def test_over_the_register_file_counts_the_reference_demand_and_r0l():
    from agxir.machine.lower_cf import lower_cf
    from oracles.machine.pressure_oracle import over_the_register_file, reference_demand

    over, under = parse_function(nested_loops(128)), parse_function(nested_loops(127))
    lower_cf(over)
    lower_cf(under)
    assert reference_demand(over) == 256 and reference_demand(under) == 254
    assert over_the_register_file(over) == (
        "needs 256 halves at once (r0l beside them), over the register file of 256 halves")
    assert over_the_register_file(under) is None
