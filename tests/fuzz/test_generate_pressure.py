"""The pressure shapes (`fuzz.generate.pressure_shapes`) find what they are for: over a
fixed stream of campaign programs (seed 1, swarm features), enough of them make the
allocator evict and fix up entry maps at the tight bound, make copy lowering break a cycle
or swap, hold a loop phi group that rotates, move immediates and uniforms into phis, and
have several critical edges. Floors are about half the shares measured when the shapes
went in, or when generator 8 made fix-ups and cycles common (in the comments), so a
change that loses a shape fails here; the `pressure` group off loses the rotating
groups."""

from dataclasses import replace

from agxir.ir import Immediate, Uniform, Value, clone_function
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.machine.lower_copies import lower_copies
from agxir.machine.lower_phis import lower_phis
from agxir.machine.paths import counting_paths
from agxir.machine.regalloc import allocate, demand_bound
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate import ChoiceSource, Features, generate_program
from fuzz.generate.cases import build_case

PROGRAMS = 200
CONFIG = CampaignConfig(seed=1, pipelines=[])
CASES = [build_case(1, index, CONFIG)[0] for index in range(PROGRAMS)]


def _tight_paths(fn) -> set[str]:
    """The paths the tight route (ra-demand, lower-phis, lower-copies) takes on `fn`."""
    work = clone_function(fn)
    with counting_paths() as counts:
        lower_cf(work)
        allocated = allocate(work, bound=demand_bound).function
        lower_phis(allocated)
        lower_copies(allocated)
    return {path for path, count in counts.items() if count}


def _rotating_groups(fn) -> int:
    """Loop phi groups whose back-edge sources are the group's own phis, in a cycle."""
    found = 0
    for block in fn.blocks:
        phis = {phi.dest: phi for phi in block.phis()}
        seen: set[Value] = set()
        for phi in phis.values():
            back = [src.ref for src, pred in zip(phi.srcs, phi.blocks, strict=True)
                    if fn.blocks.index(pred) >= fn.blocks.index(block)]
            if phi.dest in seen or len(back) != 1 or back[0] not in phis:
                continue
            cycle, at = [], phi.dest
            while at in phis and at not in cycle:
                cycle.append(at)
                nxt = [src.ref for src, pred in zip(phis[at].srcs, phis[at].blocks, strict=True)
                       if fn.blocks.index(pred) >= fn.blocks.index(block)]
                at = nxt[0] if len(nxt) == 1 else None
            if at is phi.dest and len(cycle) >= 2:
                found += 1
                seen.update(cycle)
    return found


def _critical_edges(fn) -> int:
    preds = {block: 0 for block in fn.blocks}
    for block in fn.blocks:
        for succ in block.successors:
            preds[succ] += 1
    return sum(1 for block in fn.blocks if len(block.successors) > 1
               for succ in block.successors if preds[succ] > 1)


def _share(flags) -> float:
    return sum(1 for flag in flags if flag) / len(flags)


def test_the_tight_route_evicts_fixes_up_and_breaks_cycles_often_enough():
    paths = [_tight_paths(fn) for fn in CASES if structurable(fn) is None]
    assert len(paths) >= 160
    # Measured when the shapes went in (176 structurable of the 200): evictions 16%,
    # fix-ups 6.8%, a swap or a cycle 13.6%, immediates 65%, edge splits 67%; with
    # generator 8 (181 of the 200): evictions 23.8%, fix-ups 14.4%, cycles 13.3%, a swap
    # or a cycle 17.7%, immediates 69.6%, edge splits 66.9%.
    assert _share(["eviction" in p for p in paths]) >= 0.1
    assert _share(["entry-fixup" in p for p in paths]) >= 0.07
    assert _share(["cycle" in p for p in paths]) >= 0.07
    assert _share(["swap" in p or "cycle" in p for p in paths]) >= 0.08
    assert _share(["immediate" in p for p in paths]) >= 0.4
    assert _share(["edge-split" in p for p in paths]) >= 0.4


def test_programs_hold_rotating_phi_groups_of_mixed_sizes():
    groups = [_rotating_groups(fn) for fn in CASES]
    assert _share([n > 0 for n in groups]) >= 0.07  # measured: 10%; generator 8: 14.5%
    sizes = {phi.dest.size for fn in CASES for block in fn.blocks for phi in block.phis()}
    assert sizes == {16, 32, 64}


def test_immediates_and_uniforms_go_into_phis():
    def sources(fn, kind):
        return any(isinstance(src.ref, kind) for block in fn.blocks for phi in block.phis()
                   for src in phi.srcs)

    assert _share([sources(fn, Immediate) for fn in CASES]) >= 0.4  # measured: 68%; 8: 71.5%
    assert _share([sources(fn, Uniform) for fn in CASES]) >= 0.11  # measured: 22.5%; 8: 24.5%


def test_several_critical_edges_in_one_function():
    assert _share([_critical_edges(fn) >= 2 for fn in CASES]) >= 0.24  # measured: 50.5%; 8: 44%


def test_the_pressure_group_off_makes_no_rotating_groups_and_programs_verify():
    on, off = Features.all_on(), replace(Features.all_on(), pressure=False)
    with_groups = without = 0
    for seed in range(120):
        fn = generate_program(ChoiceSource.from_seed(seed), on)
        assert verify(fn) == [], seed
        with_groups += _rotating_groups(fn) > 0
        without += _rotating_groups(generate_program(ChoiceSource.from_seed(seed), off)) > 0
    assert with_groups >= 7 and without <= with_groups // 4  # measured: 14 and 2; 8: 17 and 2
    assert "pressure" in Features.groups()
    assert not Features.all_on(address_heavy=True).pressure
