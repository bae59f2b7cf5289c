"""The SSA interpreter's scheduler with its `together` steps (every lane alive at one block:
`at` not kept) against the scheduler as first written, which kept `at` and asked it every
step (kept here as the reference): the same outcomes, steps, lane instructions and
divergence on the campaign's SSA programs at two fuels, the goldens, and input sets of
different sizes whose lanes part."""

from __future__ import annotations

import numpy as np
import pytest

from agxir.ir import SSA
from oracles.inputs import random_input_sets
from oracles.interp import CompiledFunction, vm
from oracles.interp.runner import outcomes_of, stacked_lanes
from tests.oracles.interp.test_vm import FUELS, golden_programs, ssa_programs

_DONE = np.iinfo(np.int64).max
PARTED = [0]  # steps the reference ran with lanes elsewhere


def reference_run(compiled: CompiledFunction, input_sets, fuel: int):
    """CompiledFunction.run as first written (its scheduler)."""
    X, uniform_arrays, buffers = stacked_lanes(compiled.fn, input_sets, compiled.output_slots)
    lane_set, tid = X.lane_set, X.tid
    lanes = len(lane_set)
    if compiled.vm is not None:
        R = compiled.vm.start(lanes, tid, uniform_arrays)
        values, constants = vm.Rows(R, compiled.vm, "V"), vm.Rows(R, compiled.vm, "C")
        came_from = R[vm.FLOW].view(np.int64)
    else:
        constants = compiled._constant_arrays(lanes)
        values = dict.fromkeys(compiled.value_names, np.zeros(lanes, dtype=np.uint64))
        came_from = np.full(lanes, -1, dtype=np.int64)
    at = np.zeros(lanes, dtype=np.int64)
    steps = np.zeros(lanes, dtype=np.int64)
    first = [True] * len(compiled.blocks)
    alive, most_steps, executed = lanes, 0, 0
    diverged, sets = False, len(input_sets)
    with np.errstate(all="ignore"):
        while alive:
            pos = int(at.min())
            act = at == pos
            active = int(np.count_nonzero(act))
            PARTED[0] += active != lanes
            block = compiled.blocks[pos]
            unmasked = first[pos] or active == alive
            if compiled.tracks_divergence and block.acyclic:
                X.rejoined(act, at != _DONE)
            cond = block.run(values, uniform_arrays, constants, act, came_from, unmasked, X, tid)
            first[pos] = False
            np.add(steps, block.length, out=steps, where=act)
            executed += active * block.length
            most_steps += block.length
            targets = block.targets
            if not targets:
                at[act] = _DONE
                alive -= active
            elif len(targets) == 1:
                at[act] = targets[0]
                came_from[act] = block.number
            else:
                if compiled.tracks_divergence:
                    X.branched(act, cond)
                taken, fell = act & cond, act & ~cond
                if not diverged and taken.any() and fell.any():
                    diverged = bool((np.bincount(lane_set[taken], minlength=sets)
                                     * np.bincount(lane_set[fell], minlength=sets)).any())
                at[taken] = targets[0]
                at[fell] = targets[1]
                came_from[act] = block.number
            if most_steps > fuel:
                exhausted = act & (steps > fuel)
                if exhausted.any():
                    X.out_of_fuel(exhausted, fuel, steps)
            if X.newly_dead:
                at[X.dead_sets[lane_set]] = _DONE
                X.newly_dead = False
                alive = int(np.count_nonzero(at != _DONE))
    if compiled.vm is not None:  # the VM writes exports as rows, handed over at the end
        compiled.vm.hand_outputs(R, X)
    X.find_races()
    most = np.zeros(sets, dtype=np.int64)
    np.maximum.at(most, lane_set, steps)
    set_steps = [int(n) for n in most]
    outcomes = outcomes_of(X, input_sets, buffers, compiled.output_slots, set_steps)
    return outcomes, set_steps, executed, diverged


def _agree(fn, inputs, fuel, backend=None) -> None:
    compiled = CompiledFunction(fn, backend)
    want = reference_run(compiled, inputs, fuel)
    got = compiled.run(inputs, fuel)
    assert (got, compiled.set_steps, compiled.lane_instructions, compiled.diverged) == want


@pytest.mark.parametrize("fuel", FUELS)
def test_the_scheduler_agrees_with_the_reference_on_campaign_programs(fuel):
    for fn, inputs in ssa_programs():
        _agree(fn, inputs, fuel)


def test_the_scheduler_agrees_where_lanes_part_and_on_the_goldens():
    PARTED[0] = 0
    for k, (fn, _) in enumerate(ssa_programs()[:80]):
        inputs = [s for threads, seed in ((3, k), (32, k + 1), (17, k + 2))
                  for s in random_input_sets(fn, threads, seed)]
        for fuel in (5000, 25, 90):
            _agree(fn, inputs, fuel)
            _agree(fn, inputs, fuel, "numpy")
    assert PARTED[0] > 0
    for fn in golden_programs(SSA):
        for seed in (1, 2):
            inputs = random_input_sets(fn, 32, seed=seed, count=4)
            _agree(fn, inputs, 3000)
