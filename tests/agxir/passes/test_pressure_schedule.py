"""The pressure scheduler (agxir/passes/pressure_schedule.py, schedule_deps.py): it lowers
pressure where Mesa's greedy order is better, keeps the order where it is worse, respects
every dependence, and on generated programs refines its input without raising pressure."""

from __future__ import annotations

from pathlib import Path

from agxir.ir import clone_function
from agxir.passes import PASSES
from agxir.passes.pressure_schedule import PASS, order_pressure, pressure_schedule
from agxir.passes.schedule_deps import build_dag, regions
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest
from oracles.machine.schedule_oracle import block_pressures

GOLDEN = Path(__file__).parents[2] / "golden" / "pass_pressure_schedule.agx"

LOWERS = """\
func @lowers(u0:32) {
b0:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  %c:32 = iadd u0, #3 shift=0
  %s1:32 = iadd %a, #4 shift=0
  %s2:32 = iadd %b, %s1 shift=0
  %s3:32 = iadd %c, %s2 shift=0
  export %s3 slot=0
  stop
}
"""

# Mesa's greedy order here is worse: both dead results cost two halves, the tie goes to
# %x (first in program order), placed last, and %a then has to live across %y's chain.
KEEPS = """\
func @keeps(u0:32) {
b0:
  %a:32 = iadd u0, #0 shift=0
  %x:32 = iadd %a, #1 shift=0
  %b:32 = iadd %a, #2 shift=0
  %y:32 = iadd %b, #3 shift=0
  stop
}
"""


def _names(fn) -> list[str]:
    return [ins.dest.name if ins.dest is not None else ins.name for ins in fn.instructions()]


def test_the_schedule_lowers_pressure_by_computing_values_next_to_their_use():
    fn = parse_function(LOWERS)
    assert block_pressures(fn) == {"b0": 6}
    assert PASS.run(fn)
    assert _names(fn) == ["a", "s1", "b", "s2", "c", "s3", "export", "stop"]
    assert block_pressures(fn) == {"b0": 4}
    assert verify(fn) == []


def test_a_worse_greedy_order_is_not_kept():
    fn = parse_function(KEEPS)
    text = print_function(fn)
    assert not PASS.run(fn)
    assert print_function(fn) == text
    # The order the greedy pass finds is worse: keeping it anyway raises the pressure.
    wrong = parse_function(KEEPS)
    assert pressure_schedule(wrong, keep=lambda new, old: True)
    assert _names(wrong) == ["a", "b", "y", "x", "stop"]
    assert block_pressures(wrong)["b0"] > block_pressures(fn)["b0"]


def test_mesa_counts_pressure_from_the_live_out_set():
    fn = parse_function(LOWERS)
    region = fn.blocks[0].instructions[:6]
    s3 = region[-1].dest
    assert order_pressure(region, frozenset({s3})) == 4  # six halves at most, two live out


PHIS_AND_MEMORY = """\
func @deps(u0:32, u1:ptr[64]) {
b0:
  %t:32 = get_sr sr=thread_id
  jump -> b1
b1:
  %p:32 = phi [u0, b0], [%n, b1]
  %q:32 = phi [#1, b0], [%p, b1]
  %w:32 = iadd %t, #7 shift=0
  %old:32 = device_load u1, %t fmt=i32 shift=0
  %v:32 = iadd %w, %q shift=0
  device_store %v, u1, %t fmt=i32 shift=0
  %again:32 = device_load u1, %t fmt=i32 shift=0
  export %old slot=0
  %n:32 = iadd %again, %p shift=0
  export %n slot=1
  if_icmp %n, #40 cond=ult inv=0 -> b1, b2
b2:
  stop
}
"""


def test_the_dependence_graph_has_ssa_and_memory_edges_and_fixed_points_cut_regions():
    fn = parse_function(PHIS_AND_MEMORY)
    block = fn.blocks[1]
    spans = regions(block.instructions)
    assert spans == [(2, 7), (8, 9)]  # phis, the exports and the branch are fixed
    dag = build_dag(block.instructions[2:7])
    # w, old, v, store, again: v reads w; the accesses form one chain.
    assert dag.children == [[], [], [0], [2, 1], [3]]
    assert dag.heads == [4]
    loose = build_dag(block.instructions[2:7], memory=False)
    assert loose.children == [[], [], [0], [2], []]


def test_dependences_hold_whatever_the_scheduler_chooses():
    fn = parse_function(PHIS_AND_MEMORY)
    pressure_schedule(fn, keep=lambda new, old: True)  # take every greedy order
    assert verify(fn) == []
    body = [ins.name for ins in fn.blocks[1].instructions]
    assert body[:2] == ["phi", "phi"]
    accesses = [ins for ins in fn.blocks[1].instructions if ins.name.startswith("device_")]
    assert [ins.name for ins in accesses] == ["device_load", "device_store", "device_load"]
    assert body[-1] == "if_icmp" and body.index("export") == 7


def test_the_golden_file_runs_with_the_pass(monkeypatch):
    from tests.test_golden import test_golden

    monkeypatch.setitem(PASSES, PASS.name, PASS)
    test_golden(GOLDEN)


def test_generated_programs_refine_and_keep_every_invariant():
    """A fixed-seed campaign's programs through the pass under every step oracle the
    harness applies (verifier, liveness, refinement and the pressure invariant)."""
    config = CampaignConfig(seed=7, pipelines=[], threads=8, sets=2)
    unit = PassUnderTest(PASS.name, PASS.run, ("--passes", PASS.name))
    changed = 0
    for index in range(40):
        fn, inputs = build_case(7, index, config)
        harness = Harness(inputs)
        assert harness.check(fn, [[unit]]) == []
        work = clone_function(fn)
        if PASS.run(work):
            changed += 1
            before, after = block_pressures(fn), block_pressures(work)
            # A region's maximum drops; its block's may stay (another region, or a point
            # next to an export, may hold the block's maximum).
            assert all(after[name] <= before[name] for name in before)
    assert changed >= 10  # the pass does fire on generated programs
