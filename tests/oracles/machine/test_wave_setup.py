"""The wave interpreter's run: the halves' initial garbage, built once per lane count and
shared by every run, is what each half held before (GARBAGE ^ half ^ lane, low 16 bits, odd),
and no run writes into it; the steps where every wave is at the block (unmasked) give what
the masked ones give (input sets run together as each alone)."""

import numpy as np
import pytest

from oracles.machine import CompiledWave, wave
from tests.oracles.machine.pipeline_programs import pipeline_programs


@pytest.mark.parametrize("lanes", [1, 32, 96])
def test_the_garbage_is_each_halfs_own(lanes):
    rows = wave._garbage_halves(lanes)
    lane_index = np.arange(lanes, dtype=np.uint64)
    for half in range(wave.NUM_HALVES):
        assert np.array_equal(rows[half], ((wave.GARBAGE ^ half ^ lane_index) & 0xFFFF) | 1)
    assert rows.dtype == np.uint64 and not rows.flags.writeable


def test_runs_leave_the_shared_garbage_as_it_was():
    programs = [p for p in pipeline_programs() if str(p[2].level) == "machine"][:40]
    inputs = programs[0][3]
    lanes = sum(s.threads for s in inputs)
    before = wave._garbage_halves(lanes).copy()
    for _name, _before, after, _inputs in programs:
        wave.CompiledWave(after).run(inputs)  # (a write in place would raise: read-only)
    assert np.array_equal(wave._garbage_halves(lanes), before)


def test_waves_run_together_as_each_alone():
    """A run where every wave is at the block skips masking by the waves there; one input
    set alone always does, and sets together do only until their waves part. Outcomes,
    steps and lane instructions are the same either way."""
    parted = 0
    for _name, _before, after, inputs in pipeline_programs():
        if len(inputs) < 2:
            continue
        together = CompiledWave(after)
        outcomes = together.run(inputs)
        alone = [CompiledWave(after) for _ in inputs]
        singles = [w.run([one])[0] for w, one in zip(alone, inputs, strict=True)]
        assert outcomes == singles
        assert together.set_steps == [w.set_steps[0] for w in alone]
        assert together.lane_instructions == sum(w.lane_instructions for w in alone)
        parted += len(set(together.set_steps)) > 1
    assert parted >= 5  # sets whose waves took different paths: the masked steps ran too
