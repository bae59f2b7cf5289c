"""The pressure-path counters (`agxir.machine.paths`): each pass counts the paths it takes,
on hand-written programs whose evictions, fix-ups, cycles, swaps, immediates and edge
splits are known; nothing is counted outside `counting_paths()`; the tight bound policies
(`ra-demand`, `ra-occupancy`) bound the allocator from the need."""

from pathlib import Path

import pytest

from agxir.ir import clone_function
from agxir.liveness import Liveness
from agxir.machine.lower_cf import lower_cf
from agxir.machine.lower_copies import cycles, lower_copies, split
from agxir.machine.out_of_ssa import out_of_ssa
from agxir.machine.paths import PATHS, counting_paths, reached
from agxir.machine.pipeline import ALTERNATIVES, MACHINE_PASSES, MACHINE_PIPELINES
from agxir.machine.regalloc import allocate, demand_bound, occupancy_bound
from agxir.text import parse_function
from oracles.machine.ra_checker import check_allocation
from tests.agxir.machine.test_regalloc import SPLIT_IN_IF, SPLIT_IN_LOOP, WIDE

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "machine"


def _machine(body: str) -> str:
    return f"func.machine @m() {{\nb0:\n{body}  stop\n}}\n"


def _copy_paths(body: str):
    fn = parse_function(_machine(body))
    with counting_paths() as counts:
        assert lower_copies(fn)
    return counts


def test_nothing_is_counted_outside_a_counting_block():
    reached("eviction")  # no block open: a no-op, never an error
    with counting_paths() as outer:
        with counting_paths() as inner:
            reached("swap", 2)
        reached("cycle")
    assert inner == {"swap": 2} and outer == {"cycle": 1}


def test_a_swap_of_two_halves_counts_one_swap():
    counts = _copy_paths("  r1l, r1h = parallel_copy r1h, r1l\n")
    assert counts["swap"] == 1 and counts["cycle"] == 0


def test_a_swap_of_two_32_bit_registers_is_a_swap_per_half():
    assert _copy_paths("  r2, r4 = parallel_copy r4, r2\n")["swap"] == 2


def test_a_rotation_of_three_counts_one_cycle_and_no_swap():
    counts = _copy_paths("  r1l, r1h, r2l = parallel_copy r1h, r2l, r1l\n")
    assert counts["cycle"] == 1 and counts["swap"] == 0


def test_a_chain_is_neither_a_swap_nor_a_cycle_and_immediates_are_counted():
    counts = _copy_paths("  r1l, r1h, r3 = parallel_copy r1h, r2l, #5\n")
    assert counts["swap"] == counts["cycle"] == 0
    assert counts["immediate"] == 1


def test_cycles_finds_the_cycle_a_chain_hangs_off():
    fn = parse_function(_machine("  r1l, r1h, r2l = parallel_copy r1h, r1l, r1l\n"))
    (copy,) = fn.blocks[0].instructions[:1]
    assert sorted(cycles(split(copy))) == [2]


def test_an_eviction_in_one_side_of_an_if_counts_the_eviction_and_the_fixup():
    exec_fn = parse_function(SPLIT_IN_IF)
    with counting_paths() as counts:
        allocation = allocate(exec_fn, bound=12)
    copies = [ins for ins in allocation.function.instructions() if ins.name == "parallel_copy"]
    # No aligned quad is free for the 64-bit value of either side: each side evicts (a copy
    # before it), and the else side moves the value back where the join expects it.
    assert counts["eviction"] == 2 and counts["entry-fixup"] == 1 and len(copies) == 3
    with counting_paths() as loose:
        allocate(exec_fn)
    assert loose["eviction"] == loose["entry-fixup"] == 0


def test_an_eviction_in_a_loop_body_counts_the_fixup_at_the_latch():
    with counting_paths() as counts:
        allocate(parse_function(SPLIT_IN_LOOP), bound=15)
    assert counts["eviction"] >= 1 and counts["entry-fixup"] == 1


def test_lower_cf_counts_each_critical_edge_it_splits():
    two_ifs = """\
func @f(u0:32) {
b0:
  %t:32 = get_sr sr=thread_id
  if_icmp %t, #3 cond=ult inv=0 -> b1, b2
b1:
  %a:32 = iadd %t, #1 shift=0
  jump -> b2
b2:
  %p:32 = phi [%a, b1], [#7, b0]
  if_icmp %p, u0 cond=ult inv=0 -> b4, b3
b3:
  %b:32 = iadd %p, #2 shift=0
  jump -> b4
b4:
  %q:32 = phi [#0, b2], [%b, b3]
  export %q slot=0
  stop
}
"""
    fn = parse_function(two_ifs)
    with counting_paths() as counts:
        lower_cf(fn)
    assert counts["edge-split"] == 2


def test_out_of_ssa_counts_the_edge_it_splits():
    fn = parse_function((GOLDEN / "out_of_ssa_split_edge.agx").read_text())
    with counting_paths() as counts:
        out_of_ssa(fn)
    assert counts["edge-split"] == 1


def test_every_path_the_summary_names_is_counted_by_some_pass():
    source = "".join(p.read_text() for p in (Path(__file__).resolve().parents[3] / "agxir"
                                             / "machine").glob("*.py"))
    for path in PATHS:
        assert f'reached("{path}"' in source, path


@pytest.mark.parametrize("need, demand, occupancy", [
    (1, 4, 104), (11, 12, 104), (12, 12, 104), (105, 108, 112), (250, 252, 256),
])  # fmt: skip
def test_the_tight_bounds_follow_the_need(need, demand, occupancy):
    assert demand_bound(need) == demand and occupancy_bound(need) == occupancy
    assert demand % 4 == 0 and need <= demand <= occupancy


def test_ra_demand_allocates_at_the_need_rounded_up_to_a_quad():
    for text in (WIDE, SPLIT_IN_IF, SPLIT_IN_LOOP):
        exec_fn = parse_function(text)
        liveness = Liveness(exec_fn)
        need = liveness.max_pressure + (1 if "r0l" in text else 0)
        fn = clone_function(exec_fn)
        assert MACHINE_PASSES["ra-demand"].run(fn)
        assert fn.notes["bound"] == -(-need // 4) * 4
        assert check_allocation(exec_fn, fn) == []
        occupancy = clone_function(exec_fn)
        assert MACHINE_PASSES["ra-occupancy"].run(occupancy)
        assert occupancy.notes["bound"] == 104


def test_the_tight_pipelines_are_alternatives_the_default_campaign_runs():
    for pipeline, weight in ALTERNATIVES:
        assert pipeline in MACHINE_PIPELINES and weight > 0
