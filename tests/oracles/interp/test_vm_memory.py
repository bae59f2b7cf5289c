"""The lane VM's in-place loads and stores (oracles/interp/lanevm_src/memory.c) against
`Lanes.load` / `Lanes.store`, which they stand for where every active lane is inside one
buffer: the same loaded rows, the same memory, the same races found after the run, and
nothing done (the Python path then) in every other case."""

from __future__ import annotations

import numpy as np
import pytest

from oracles.interp import vm
from oracles.interp.lanes import Lanes
from oracles.memory_model import buffer_base
from tests.oracles.interp.test_lanes import SIZES, _addresses, _lanes

access = vm.LANEVM.access if vm.LANEVM is not None else None
ADDRESS, ACT, DATA, ROWS = 0, 1, 2, 3


def _in_place(X: Lanes, address, act, data, nbytes: int, store: bool) -> tuple[int, np.ndarray]:
    """One access through memory.c as vm.py's callbacks make it: the buffer (or -1) and
    the data row after it; logged for the race check as the callbacks log it."""
    R = np.zeros((ROWS, len(address)), dtype=np.uint64)
    R[ADDRESS], R[ACT], R[DATA] = address, act, data
    layout = X.layout
    buffer, disjoint = access(R, ADDRESS, ACT, DATA, nbytes, store, X.memory, layout.lane_set,
                              layout.sizes, layout.starts, layout.n_buffers)
    if buffer >= 0:
        X.accessed_in_place(buffer, R[ADDRESS].copy(), R[ACT] != 0, nbytes, store, disjoint)
    return buffer, R[DATA]


def test_the_vm_is_built_with_its_memory_access():
    assert access is not None


@pytest.mark.parametrize("seed", range(40))
def test_in_place_accesses_agree_with_lanes(seed):
    rng = np.random.default_rng(seed)
    lanes = len(_lanes().lane_set)
    taken = declined = 0
    for nbytes in (1, 2, 4):
        for mode in (0, 0, 1):
            address = _addresses(rng, lanes, nbytes, mode)
            act = rng.random(lanes) < rng.choice([0.0, 0.7, 1.1])
            garbage = rng.integers(0, 2**63, lanes, dtype=np.uint64)
            ours, theirs = _lanes(), _lanes()
            buffer, loaded = _in_place(ours, address, act, garbage.copy(), nbytes, False)
            if buffer < 0:  # declined: nothing written, and the Python path is needed
                declined += 1
                assert (loaded == garbage).all() and not ours.in_place
                assert (ours.memory == theirs.memory).all()
                continue
            taken += 1
            assert act.any() and (address[act] >> np.uint64(32) == buffer + 1).all()
            assert (loaded == theirs.load(address, nbytes, act)).all()
            value = rng.integers(0, 2**63, lanes, dtype=np.uint64)
            assert _in_place(ours, address, act, value, nbytes, True)[0] == buffer
            theirs.store(address, value, nbytes, act)
            assert (ours.memory == theirs.memory).all()
            assert ours.fate == theirs.fate == [None] * ours.n_sets
            ours.find_races()
            theirs.find_races()
            assert ours.fate == theirs.fate
    assert taken and declined


def test_an_out_of_bounds_lane_is_left_to_lanes():
    X = _lanes()
    lanes = len(X.lane_set)
    address = np.full(lanes, buffer_base(1), dtype=np.uint64)
    address[3] += np.uint64(SIZES[1] - 1)  # a 4-byte load past the end of 20 bytes
    act = np.ones(lanes, dtype=bool)
    assert _in_place(X, address, act, np.zeros(lanes, np.uint64), 4, False)[0] == -1
    act[3] = False  # not active: not looked at
    assert _in_place(X, address, act, np.zeros(lanes, np.uint64), 4, False)[0] == 1


@pytest.mark.parametrize("seed", range(30))
def test_races_between_in_place_and_python_accesses_are_found(seed):
    """A run mixing both kinds of access finds the races a run of Python accesses finds."""
    rng = np.random.default_rng(seed)
    lanes = len(_lanes().lane_set)
    ours, theirs = _lanes(), _lanes()
    for _ in range(4):
        nbytes = int(rng.choice([1, 2, 4]))
        buffer = int(rng.integers(0, len(SIZES)))
        # few distinct offsets, so threads of one set often share bytes
        offsets = rng.integers(0, SIZES[buffer] // nbytes, lanes) * nbytes
        address = (buffer_base(buffer) + offsets).astype(np.uint64)
        act = rng.random(lanes) < 0.08
        if not act.any():
            continue
        value = rng.integers(0, 2**32, lanes, dtype=np.uint64)
        store = bool(rng.integers(0, 2))
        if rng.integers(0, 2):
            assert _in_place(ours, address, act, value.copy(), nbytes, store)[0] == buffer
        elif store:
            ours.store(address, value, nbytes, act)
        else:
            ours.load(address, nbytes, act)
        if store:
            theirs.store(address, value, nbytes, act)
        else:
            theirs.load(address, nbytes, act)
    ours.find_races()
    theirs.find_races()
    assert ours.fate == theirs.fate
    assert (ours.memory == theirs.memory).all()


def test_arguments_that_do_not_fit_are_refused():
    X = _lanes()
    lanes = len(X.lane_set)
    R = np.zeros((ROWS, lanes), dtype=np.uint64)
    layout = X.layout
    with pytest.raises(IndexError):
        access(R, ROWS, ACT, DATA, 4, False, X.memory, layout.lane_set, layout.sizes,
               layout.starts, layout.n_buffers)
    with pytest.raises(ValueError):
        access(R, ADDRESS, ACT, DATA, 4, False, X.memory, layout.lane_set[:-1], layout.sizes,
               layout.starts, layout.n_buffers)
    with pytest.raises(TypeError):
        access(R.astype(np.uint32), ADDRESS, ACT, DATA, 4, False, X.memory, layout.lane_set,
               layout.sizes, layout.starts, layout.n_buffers)


@pytest.mark.parametrize("seed", range(30))
def test_disjoint_is_said_only_of_accesses_whose_threads_share_no_byte(seed):
    rng = np.random.default_rng(seed)
    X = _lanes()
    lanes = len(X.lane_set)
    nbytes = int(rng.choice([1, 2, 4]))
    buffer = int(rng.integers(0, len(SIZES)))
    if rng.integers(0, 2):  # thread-indexed, as most generated accesses are
        offsets = (X.tid.astype(np.int64) * nbytes) % (SIZES[buffer] - nbytes + 1)
    else:
        offsets = rng.integers(0, SIZES[buffer] - nbytes + 1, lanes)
    address = (buffer_base(buffer) + offsets).astype(np.uint64)
    act = rng.random(lanes) < rng.choice([0.3, 1.1])
    store = bool(rng.integers(0, 2))
    found, disjoint = access(np.stack([address, act.astype(np.uint64),
                                       np.zeros(lanes, np.uint64)]), ADDRESS, ACT, DATA, nbytes,
                             store, X.memory, X.layout.lane_set, X.layout.sizes,
                             X.layout.starts, X.layout.n_buffers)
    assert found == (buffer if act.any() else -1)
    shared = False
    for s in range(X.n_sets):
        cells = [offsets[lane] + k for lane in np.flatnonzero(act & (X.lane_set == s))
                 for k in range(nbytes)]
        shared |= len(cells) != len(set(cells))
    assert not (disjoint and shared)
    if found >= 0 and not shared and np.all(np.diff(offsets[act & (X.lane_set == 0)]) > 0):
        assert disjoint or X.n_sets > 1  # lane order increasing in set 0 at least


def test_one_disjoint_store_is_no_race_and_a_shared_word_is():
    X = _lanes()
    lanes = len(X.lane_set)
    act = np.ones(lanes, dtype=bool)
    tid = X.tid.astype(np.int64)
    spread = (buffer_base(0) + (tid * 4) % 32).astype(np.uint64)  # 8 words: tid 8 is on 0's
    buffer, disjoint = access(np.stack([spread, act.astype(np.uint64), spread]), ADDRESS, ACT,
                              DATA, 4, True, X.memory, X.layout.lane_set, X.layout.sizes,
                              X.layout.starts, X.layout.n_buffers)
    assert buffer == 0 and not disjoint  # set 2 has 16 threads: tid 8 writes tid 0's word
    ours, theirs = _lanes(), _lanes()
    first_eight = act & (X.tid < 8)
    assert _in_place(ours, spread, first_eight, spread, 4, True)[0] == 0
    assert ours.in_place[0][5]  # said disjoint
    theirs.store(spread, spread, 4, first_eight)
    ours.find_races()
    theirs.find_races()
    assert ours.fate == theirs.fate == [None] * ours.n_sets
    ours, theirs = _lanes(), _lanes()
    assert _in_place(ours, spread, act, spread, 4, True)[0] == 0
    theirs.store(spread, spread, 4, act)
    ours.find_races()
    theirs.find_races()
    assert ours.fate == theirs.fate and ours.fate[2] is not None
