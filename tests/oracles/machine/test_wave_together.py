"""The wave interpreter's scheduler with its `together` steps (every wave at one block: `at`
not kept, no masking by `here`) against the scheduler as first written, which kept `at` and
asked it every step (kept here as the reference): the same outcomes, steps and lane
instructions on the campaign's exec, vreg and machine programs at two fuels, the goldens,
and input sets whose waves part (different thread counts and inputs per set)."""

from __future__ import annotations

import numpy as np
import pytest

from oracles.inputs import random_input_sets
from oracles.interp import vm
from oracles.interp.runner import outcomes_of, stacked_lanes
from oracles.machine import CompiledWave
from oracles.machine.wave import _garbage_halves, _garbage_names
from tests.oracles.machine.test_wave_vm import FUELS, LEVELS, wave_programs

_DONE = np.iinfo(np.int64).max
PARTED = [0]  # steps the reference ran with some waves elsewhere


def reference_run(compiled: CompiledWave, input_sets, fuel: int):
    """CompiledWave.run as first written (its scheduler): outcomes, set steps, lane steps."""
    X, U, buffers = stacked_lanes(compiled.fn, input_sets, compiled.output_slots)
    lane_set, tid = X.lane_set, X.tid
    lanes = len(lane_set)
    if compiled.vm is not None:
        R = compiled.vm.start(lanes, tid, U, _garbage_names, _garbage_halves)
        V, H, C = (vm.Rows(R, compiled.vm, kind) for kind in ("V", "H", "C"))
        LB = R[vm.FLOW].view(np.int64)
    else:
        C = {value: np.full(lanes, value, dtype=np.uint64) for value in compiled.constants}
        H = list(_garbage_halves(lanes))
        V = dict.fromkeys(compiled.names, _garbage_names(lanes))
        LB = np.full(lanes, -1, dtype=np.int64)
    waves = len(input_sets)
    at = np.zeros(waves, dtype=np.int64)
    steps = np.zeros(waves, dtype=np.int64)
    active_steps = np.zeros(lanes, dtype=np.int64)
    act = np.ones(lanes, dtype=bool)
    executed = most_steps = 0
    last = len(compiled.blocks)
    if last == 0:
        at[:] = _DONE
    everywhere = np.ones(lanes, dtype=bool)
    with np.errstate(all="ignore"):
        while (at != _DONE).any():
            pos = int(at.min())
            here_waves = at == pos
            block = compiled.blocks[pos]
            if here_waves.all():
                after = block.run(V, H, U, C, everywhere, act, LB, X, tid)
                np.add(active_steps, block.length, out=active_steps, where=act | after)
                act = after
                steps += block.length
                executed += lanes * block.length
            else:
                PARTED[0] += 1
                here = here_waves[lane_set]
                before = act & here
                after = block.run(V, H, U, C, here, before, LB, X, tid)
                np.add(active_steps, block.length, out=active_steps, where=before | after)
                act = np.where(here, after, act)
                steps[here_waves] += block.length
                executed += int(np.count_nonzero(here)) * block.length
            following = pos + 1
            if block.stops:
                at[here_waves] = _DONE
            elif block.branch is not None:
                kind, target = block.branch
                any_active = np.bincount(lane_set, weights=after, minlength=waves) > 0
                taken = any_active if kind == "jmp_exec_any" else ~any_active
                at[here_waves & taken] = target
                at[here_waves & ~taken] = following if following < last else _DONE
            else:
                at[here_waves] = following if following < last else _DONE
            most_steps += block.length
            if most_steps > fuel:
                exhausted = here_waves & (steps > fuel) & (at != _DONE)
                if exhausted.any():
                    X.out_of_fuel(exhausted[lane_set], fuel, active_steps)
                    at[exhausted] = _DONE
            if X.newly_dead:
                at[X.dead_sets] = _DONE
                X.newly_dead = False
    if compiled.vm is not None:  # the VM writes exports as rows, handed over at the end
        compiled.vm.hand_outputs(R, X)
    X.find_races()
    set_steps = [int(n) for n in steps]
    return outcomes_of(X, input_sets, buffers, compiled.output_slots, set_steps), set_steps, executed


def _agree(fn, inputs, fuel) -> None:
    compiled = CompiledWave(fn)
    want = reference_run(compiled, inputs, fuel)
    got = compiled.run(inputs, fuel)
    assert (got, compiled.set_steps, compiled.lane_instructions) == want


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("fuel", FUELS)
def test_the_scheduler_agrees_with_the_reference_on_campaign_programs(level, fuel):
    for fn, inputs in wave_programs()[level]:
        _agree(fn, inputs, fuel)


@pytest.mark.parametrize("level", LEVELS)
def test_the_scheduler_agrees_where_waves_part(level):
    # Waves of different sizes and inputs part at exec branches more often than equal ones.
    PARTED[0] = 0
    for k, (fn, _) in enumerate(wave_programs()[level][:60]):
        inputs = [s for threads, seed in ((3, k), (32, k + 1), (17, k + 2))
                  for s in random_input_sets(fn, threads, seed)]
        for fuel in (5000, 25, 90):
            _agree(fn, inputs, fuel)
    assert PARTED[0] > 0
