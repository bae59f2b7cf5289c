"""The wave interpreter's per-run setup: the halves' initial garbage, built once per lane count
and shared by every run, is what each half held before (GARBAGE ^ half ^ lane, low 16 bits,
odd), and no run writes into it."""

import numpy as np
import pytest

from oracles.machine import wave
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
