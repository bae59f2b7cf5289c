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
    buffer = access(R, ADDRESS, ACT, DATA, nbytes, store, X.memory, layout.lane_set,
                    layout.sizes, layout.starts, layout.n_buffers)
    if buffer >= 0:
        X.accessed_in_place(buffer, R[ADDRESS].copy(), R[ACT] != 0, nbytes, store)
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
