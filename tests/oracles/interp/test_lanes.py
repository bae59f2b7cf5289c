"""Lanes' quick paths against the general ones they stand for: `_locate` for accesses inside
one buffer, `find_races`' disjointness test, and the shared per-input-sets set-up."""

from __future__ import annotations

import numpy as np
import pytest

from agxir.ir import Uniform
from agxir.text import parse_function
from oracles.inputs import InputSet, random_input_sets
from oracles.interp import CompiledFunction, runner
from oracles.interp import lanes as lanes_module
from oracles.interp.lanes import Lanes
from oracles.memory_model import DATA_RACE, buffer_base
from oracles.outcomes import Returned, Undefined

SIZES = [64, 20, 8]


def _lanes(threads=(8, 5, 16), output_slots=2) -> Lanes:
    counts = list(threads)
    lane_set = np.repeat(np.arange(len(counts)), counts)
    tid = np.concatenate([np.arange(n) for n in counts]).astype(np.uint64)
    contents = [[bytes(range(s, s + size)) for size in SIZES] for s in range(len(counts))]
    return Lanes(lane_set, tid, SIZES, contents, output_slots)


def _addresses(rng, lanes: int, nbytes: int, mode: int) -> np.ndarray:
    buffer = int(rng.integers(0, len(SIZES)))
    size = SIZES[buffer]
    if mode == 0:  # inside one buffer (the quick path)
        offsets = rng.integers(0, size - nbytes + 1, lanes)
        return (buffer_base(buffer) + offsets).astype(np.uint64)
    # anywhere near any buffer, below its base, past its end, unknown buffers
    numbers = rng.integers(0, len(SIZES) + 2, lanes).astype(np.uint64)
    offsets = rng.integers(-4, 70, lanes).astype(np.int64).astype(np.uint64)
    return (numbers << np.uint64(32)) + offsets


@pytest.mark.parametrize("seed", range(40))
def test_quick_locate_agrees_with_the_general_one(seed):
    rng = np.random.default_rng(seed)
    lanes = len(_lanes().lane_set)
    for nbytes in (1, 2, 4):
        for mode in (0, 1, 1):
            address = _addresses(rng, lanes, nbytes, mode)
            act = rng.random(lanes) < rng.choice([0.7, 1.1])  # some with every lane
            quick, general = _lanes(), _lanes()
            got = quick._locate(address, nbytes, act)
            want = general._locate_any(address, nbytes, act)
            assert (got[0] == want[0]).all()
            if len(want[0]):
                assert (got[1] == want[1]).all() and (np.broadcast_to(got[2], want[2].shape) == want[2]).all()
            assert quick.fate == general.fate
            loaded = quick.load(address, nbytes, act)
            want = np.zeros(lanes, dtype=np.uint64)
            if len(got[0]):
                view = general.memory.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[nbytes])
                want[got[0]] = view[general.lane_set[got[0]], got[1] // nbytes]
            assert loaded.dtype == np.uint64 and (loaded == want).all()
            value = np.arange(lanes, dtype=np.uint64) * np.uint64(0x01010101)
            quick.store(address, value, nbytes, act)
            lanes_in, flat, _ = general._locate_any(address, nbytes, act)
            view = general.memory.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[nbytes])
            view[general.lane_set[lanes_in], flat // nbytes] = value[lanes_in].astype(view.dtype)
            assert (quick.memory == general.memory).all() and quick.fate == general.fate


def _full_search(X: Lanes) -> list:
    """find_races by the reference with the disjointness test taken away: the numpy
    byte-by-byte search always (the C search, where built, has no such test)."""
    X._disjoint = lambda touched, width: False
    native, lanes_module.native_races = lanes_module.native_races, None
    try:
        X.find_races()
    finally:
        lanes_module.native_races = native
    return X.fate


@pytest.mark.parametrize("seed", range(60))
def test_races_found_with_the_disjointness_test_as_without(seed):
    rng = np.random.default_rng(seed)
    runs = [_lanes(), _lanes()]
    lanes = len(runs[0].lane_set)
    for _ in range(int(rng.integers(1, 5))):
        nbytes = int(rng.choice([1, 2, 4]))
        spread = int(rng.choice([1, 3, 16]))  # few places: lanes collide
        buffer = int(rng.integers(0, 2))
        offsets = (rng.integers(0, spread, lanes) * nbytes) % (SIZES[buffer] - nbytes + 1)
        address = (buffer_base(buffer) + offsets).astype(np.uint64)
        if rng.random() < 0.4:  # each lane its own place: no collision
            address = (buffer_base(0) + (np.arange(lanes) % 16) * 4).astype(np.uint64)
            nbytes = 4
        act = rng.random(lanes) < 0.8
        store = rng.random() < 0.5
        for X in runs:
            if store:
                X.store(address, np.arange(lanes, dtype=np.uint64), nbytes, act)
            else:
                X.load(address, nbytes, act)
    runs[0].find_races()
    assert runs[0].fate == _full_search(runs[1])


def test_a_disjoint_run_is_not_searched_and_a_colliding_one_is():
    X = _lanes((4,))
    address = (buffer_base(0) + np.arange(4) * 4).astype(np.uint64)
    X.load(address, 4, np.ones(4, bool))
    X.store(address + np.uint64(32), np.arange(4, dtype=np.uint64), 4, np.ones(4, bool))
    touched = [(lanes, flat, nbytes, w) for lanes, flat, _, nbytes, w in X.accesses]
    assert X._disjoint(touched, X.memory.shape[1])
    X.store(address[::-1].copy(), np.arange(4, dtype=np.uint64), 2, np.ones(4, bool))
    X.find_races()
    assert X.fate[0] == Undefined(DATA_RACE, 3)


COPY = """
func @copy(u0:ptr[64], u1:ptr[64], u2:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %x:32 = device_load u0, %tid fmt=i32 shift=0
  %y:32 = iadd %x, u2 shift=0
  device_store %y, u1, %tid fmt=i32 shift=0
  export %y slot=0
  stop
}
"""


def test_the_set_up_is_shared_by_runs_of_the_same_input_sets_and_never_stale():
    fn = parse_function(COPY)
    compiled = CompiledFunction(fn)
    sets = random_input_sets(fn, 8, seed=3, count=3)
    first = compiled.run(sets)
    again = compiled.run(sets)
    assert first == again
    # equal sets built anew: the same outcomes, whichever set-up they take
    copies = [InputSet(s.threads, dict(s.scalars), dict(s.buffers)) for s in sets]
    assert compiled.run(copies) == first
    # the same objects with different contents (their dicts are mutable): not reused
    sets[1].scalars["u2"] = (sets[1].scalars["u2"] + 1) & 0xFFFFFFFF
    changed = compiled.run(sets)
    fresh = CompiledFunction(fn, backend="numpy").run(
        [InputSet(s.threads, dict(s.scalars), dict(s.buffers)) for s in sets])
    assert changed == fresh and changed[1] != first[1] and changed[0] == first[0]


def test_the_set_up_cache_is_bounded():
    fn = parse_function(COPY)
    compiled = CompiledFunction(fn)
    for seed in range(runner._SETUPS_LIMIT + 5):
        compiled.run(random_input_sets(fn, 2, seed=seed, count=1))
        assert len(runner._SETUPS) <= runner._SETUPS_LIMIT


def _reference_outcomes(X: Lanes, input_sets, buffers, slots: int, steps) -> list:
    """outcomes_of as first written: per set and lane, memory by numpy slices."""
    outcomes, first = [], 0
    for s, input_set in enumerate(input_sets):
        lanes = range(first, first + input_set.threads)
        first += input_set.threads
        if X.fate[s] is not None:
            outcomes.append(X.fate[s])
            continue
        memory = {u.name: X.memory[s, int(X.starts[k]) : int(X.starts[k]) + u.buffer_bytes].tobytes()
                  for k, u in enumerate(buffers)}
        rows = tuple(tuple(int(X.outputs[lane, k]) if X.written[lane, k] else None
                           for k in range(slots)) for lane in lanes)
        outcomes.append(Returned(memory, rows, steps[s]))
    return outcomes


@pytest.mark.parametrize("seed", range(12))
def test_outcomes_are_built_as_the_reference_builds_them(seed):
    rng = np.random.default_rng(seed)
    threads = [int(n) for n in rng.integers(1, 40, 3)]
    slots = int(rng.integers(0, 4))
    X = _lanes(threads, slots + int(rng.integers(0, 2)))
    X.output_rows[:] = rng.integers(0, 2**63, X.output_rows.shape, dtype=np.uint64)
    X.written_rows[:] = rng.random(X.written_rows.shape) < (0.7 if seed % 2 else 1.0)
    X.memory[:] = rng.integers(0, 256, X.memory.shape, dtype=np.uint8)
    if seed % 3 == 0:
        X.fate[1] = Undefined(DATA_RACE, 2)
    sets = [InputSet(n) for n in threads]
    buffers = [Uniform(f"u{k}", 64, size) for k, size in enumerate(SIZES)]
    steps = [int(n) for n in rng.integers(0, 100, 3)]
    got = runner.outcomes_of(X, sets, buffers, slots, steps)
    assert got == _reference_outcomes(X, sets, buffers, slots, steps)


def test_a_buffer_changed_in_place_is_not_run_from_the_kept_set_up():
    fn = parse_function(COPY)
    compiled = CompiledFunction(fn)
    (given,) = random_input_sets(fn, 4, seed=5, count=1)
    mutable = bytearray(given.buffers["u0"])
    input_set = InputSet(4, dict(given.scalars), {"u0": mutable, "u1": given.buffers["u1"]})
    before = compiled.run([input_set])
    mutable[0] ^= 0xFF
    after = compiled.run([input_set])
    assert after != before
    assert after == CompiledFunction(fn, backend="numpy").run([input_set])
