"""The race check's search in C (oracles/interp/lanevm_src/races.c) against the numpy
reference (`lanes.racing_threads`): the same verdict per input set (the thread id reported,
or none) on random access logs of several input sets, logged and in-place accesses, reads
and writes of 1, 2, 4 and 8 bytes, lanes colliding and not; the same fates through
`Lanes.find_races` either way (a fate already decided kept, running out of fuel overridden);
the goldens with races undefined as before; and NotImplemented, so the reference judges,
for what the C does not take."""

from __future__ import annotations

import numpy as np
import pytest

from agxir.ir import SSA
from agxir.text import parse_function
from oracles.inputs import InputSet, random_input_sets
from oracles.interp import CompiledFunction, lanes
from oracles.interp.lanes import Lanes, in_place_accesses, racing_threads
from oracles.machine import CompiledWave
from oracles.memory_model import DATA_RACE, OUT_OF_BOUNDS, buffer_base
from oracles.outcomes import OutOfFuel, Undefined
from tests.oracles.interp.test_vm import GOLDEN, golden_programs

native = lanes.native_races
needs_native = pytest.mark.skipif(native is None, reason="the lane VM is not built")


def _layout(rng):
    """Lanes' shape: a few input sets of some threads each, a few buffers placed in a
    set's memory as LaneLayout places them."""
    threads = [int(n) for n in rng.integers(1, 40, int(rng.integers(1, 5)))]
    lane_set = np.repeat(np.arange(len(threads)), threads)
    tid = np.concatenate([np.arange(n) for n in threads]).astype(np.uint64)
    sizes = [int(n) for n in rng.choice([8, 16, 24, 64, 200], int(rng.integers(1, 4)))]
    starts, total = [], 0
    for size in sizes:
        starts.append(total)
        total += (size + 7) & ~7
    return lane_set, tid, len(threads), total, sizes, starts


def _log(rng, lane_set, sizes, starts):
    """Random accesses, half logged by Lanes (lanes, flat, nbytes, writing), half in place
    (buffer, address over every lane, act, nbytes, writing, disjoint), in few places
    (lanes collide) or one place per lane (they do not)."""
    n = len(lane_set)
    logged, in_place = [], []
    for _ in range(int(rng.integers(1, 7))):
        nbytes = int(rng.choice([1, 2, 4, 8]))
        buffer = int(rng.integers(0, len(sizes)))
        size = sizes[buffer]
        if size < nbytes:
            continue
        if rng.random() < 0.3:  # each lane of a set its own place
            rank = np.arange(n) - np.searchsorted(lane_set, lane_set)
            offsets = (rank * nbytes) % (size - nbytes + 1)
        else:
            spread = int(rng.choice([1, 2, 3, 8, 64]))
            offsets = rng.integers(0, spread, n) * int(rng.choice([1, nbytes])) % (size - nbytes + 1)
        act = rng.random(n) < rng.choice([0.2, 0.8, 1.0])
        if not act.any():
            continue
        writing = bool(rng.random() < 0.4)
        if rng.random() < 0.5:
            lanes_in = np.flatnonzero(act)
            logged.append((lanes_in, offsets[lanes_in] + starts[buffer], nbytes, writing))
        else:
            address = (buffer_base(buffer) + offsets).astype(np.uint64)
            garbage = rng.integers(0, 2**64, n, dtype=np.uint64)  # inactive lanes' addresses
            in_place.append((buffer, np.where(act, address, garbage), act, nbytes, writing, False))
    return logged, in_place


@needs_native
@pytest.mark.parametrize("seed", range(300))
def test_c_verdicts_are_the_references_on_random_logs(seed):
    rng = np.random.default_rng(seed)
    lane_set, tid, n_sets, width, sizes, starts = _layout(rng)
    logged, in_place = _log(rng, lane_set, sizes, starts)
    want = racing_threads(lane_set, tid, n_sets, width, logged + in_place_accesses(in_place, starts))
    got = native(lane_set, tid, n_sets, width, np.asarray(starts, np.int64), logged, in_place)
    assert got == want
    assert all(type(thread) is int for thread in got)


def test_the_random_logs_race_and_do_not():
    """What the random logs hold: racing sets and quiet ones, often in one log, and reported
    threads that are not simply each set's highest."""
    seen = {"racing": 0, "quiet": 0, "mixed": 0, "not the highest": 0}
    for seed in range(300):
        rng = np.random.default_rng(seed)
        lane_set, tid, n_sets, width, sizes, starts = _layout(rng)
        logged, in_place = _log(rng, lane_set, sizes, starts)
        found = racing_threads(lane_set, tid, n_sets, width, logged + in_place_accesses(in_place, starts))
        seen["racing"] += sum(thread >= 0 for thread in found)
        seen["quiet"] += sum(thread < 0 for thread in found)
        seen["mixed"] += min(found) < 0 <= max(found)
        seen["not the highest"] += any(0 <= thread < tid[lane_set == s].max()
                                       for s, thread in enumerate(found))
    assert min(seen.values()) >= 20, seen


def _with_reference(X: Lanes, monkeypatch) -> list:
    monkeypatch.setattr(lanes, "native_races", None)
    X.find_races()
    monkeypatch.undo()
    return X.fate


SIZES = [64, 20, 8]
FATES = [None, OutOfFuel(100, 7), Undefined(OUT_OF_BOUNDS, 1)]


@pytest.mark.parametrize("seed", range(60))
def test_find_races_decides_the_same_fates_either_way(seed, monkeypatch):
    """Through Lanes: loads and stores by numpy (logged) and in place, fates set before the
    check (running out of fuel is overridden by a race, undefined behaviour is not)."""
    rng = np.random.default_rng(seed)
    counts = [int(n) for n in rng.integers(1, 20, 3)]
    lane_set = np.repeat(np.arange(3), counts)
    tid = np.concatenate([np.arange(n) for n in counts]).astype(np.uint64)
    contents = [[bytes(size) for size in SIZES] for _ in counts]
    runs = [Lanes(lane_set, tid, SIZES, contents, 1) for _ in range(2)]
    n = len(lane_set)
    fates = [FATES[int(k)] for k in rng.integers(0, 3, 3)]
    for X in runs:
        X.fate = list(fates)
    for _ in range(int(rng.integers(1, 6))):
        nbytes = int(rng.choice([1, 2, 4]))
        buffer = int(rng.integers(0, 3))
        offsets = rng.integers(0, int(rng.choice([2, 6, 32])), n) * nbytes % (SIZES[buffer] - nbytes + 1)
        address = (buffer_base(buffer) + offsets).astype(np.uint64)
        act = rng.random(n) < 0.8
        store = bool(rng.random() < 0.5)
        in_place = rng.random() < 0.5 and act.any()
        for X in runs:
            if in_place:  # (what the VM did to memory does not matter to the check)
                X.accessed_in_place(buffer, address.copy(), act.copy(), nbytes, store)
            elif store:
                X.store(address, np.arange(n, dtype=np.uint64), nbytes, act)
            else:
                X.load(address, nbytes, act)
    runs[0].find_races()
    assert runs[0].fate == _with_reference(runs[1], monkeypatch)


RACE = GOLDEN / "data_race_undefined.agx"


@pytest.mark.parametrize("reference", [False, True])
def test_the_race_golden_is_undefined_either_way(reference, monkeypatch):
    if reference:
        monkeypatch.setattr(lanes, "native_races", None)
    fn = parse_function(RACE.read_text())
    outcomes = CompiledFunction(fn).run([InputSet(2), InputSet(1), InputSet(32)])
    assert [o.kind for o in outcomes] == ["undefined", "returned", "undefined"]
    assert outcomes[0] == Undefined(DATA_RACE, 1) and outcomes[2] == Undefined(DATA_RACE, 31)


def test_the_goldens_have_the_same_outcomes_either_way(monkeypatch):
    programs = [(CompiledFunction, fn) for fn in golden_programs(SSA)]
    programs += [(CompiledWave, fn) for fn in golden_programs("machine")]
    inputs = [random_input_sets(fn, 32, seed=1, count=3) for _, fn in programs]
    with_c = [make(fn).run(sets, 3000) for (make, fn), sets in zip(programs, inputs)]
    monkeypatch.setattr(lanes, "native_races", None)
    reference = [make(fn).run(sets, 3000) for (make, fn), sets in zip(programs, inputs)]
    assert with_c == reference
    reasons = {o.reason for outcomes in with_c for o in outcomes if o.kind == "undefined"}
    assert DATA_RACE in reasons


# --- NotImplemented: the reference judges ------------------------------------------------------
@needs_native
def test_what_the_c_does_not_take_is_the_references():
    rng = np.random.default_rng(5)
    lane_set, tid, n_sets, width, sizes, starts = _layout(rng)
    while True:
        logged, in_place = _log(rng, lane_set, sizes, starts)
        if logged and in_place:
            break
    starts_array = np.asarray(starts, np.int64)
    lanes0, flat0, nbytes0, writing0 = logged[0]
    buffer, address, act, nbytes, writing, disjoint = in_place[0]
    n = len(lane_set)
    odd = {
        "float thread ids": (lane_set, tid.astype(np.float64), n_sets, width, starts_array, logged, in_place),
        "a tuple of logs": (lane_set, tid, n_sets, width, starts_array, tuple(logged), in_place),
        "a lane past the last": ([(np.array([n]), np.array([0]), 1, True)], []),
        "a negative offset": ([(lanes0, flat0 - 1 - flat0.max(), nbytes0, writing0)], []),
        "an offset past the set's memory": ([(lanes0, flat0 + width, nbytes0, writing0)], []),
        "offsets of another type": ([(lanes0, flat0.astype(np.float64), nbytes0, writing0)], []),
        "unsigned offsets": ([(lanes0, flat0.astype(np.uint64), nbytes0, writing0)], []),
        "offsets fewer than lanes": ([(lanes0, flat0[:-1], nbytes0, writing0)], []),
        "signed addresses": ([], [(buffer, address.view(np.int64), act, nbytes, writing, disjoint)]),
        "act not bools": ([], [(buffer, address, act.astype(np.uint8), nbytes, writing, disjoint)]),
        "no bytes": ([(lanes0, flat0, 0, writing0)], []),
        "an unknown buffer": ([], [(len(sizes), address, act, nbytes, writing, disjoint)]),
        "act not over every lane": ([], [(buffer, address, act[:-1], nbytes, writing, disjoint)]),
        "a short entry": ([(lanes0, flat0, nbytes0)], []),
    }
    for what, args in odd.items():
        if len(args) == 2:
            args = (lane_set, tid, n_sets, width, starts_array, *args)
        assert native(*args) is NotImplemented, what
    assert native(lane_set, tid, n_sets, width, starts_array, logged, in_place) is not NotImplemented


def test_a_log_the_c_declines_is_judged_by_the_reference(monkeypatch):
    """A Lanes whose log the C does not take (offsets of another dtype) still gets the
    reference's fates."""
    counts = [4, 3]
    lane_set = np.repeat(np.arange(2), counts)
    tid = np.concatenate([np.arange(n) for n in counts]).astype(np.uint64)
    runs = [Lanes(lane_set, tid, SIZES, [[bytes(s) for s in SIZES]] * 2, 1) for _ in range(2)]
    for X in runs:
        X.store((buffer_base(0) + np.arange(7) % 2 * 4).astype(np.uint64),
                np.arange(7, dtype=np.uint64), 4, np.ones(7, bool))
        lanes_in, flat, buffers, nbytes, writing = X.accesses[0]
        X.accesses[0] = (lanes_in, flat.astype(np.int32), buffers, nbytes, writing)
    if native is not None:
        logged = [(a[0], a[1], a[3], a[4]) for a in runs[0].accesses]
        assert native(lane_set, tid, 2, runs[0].memory.shape[1], runs[0].starts, logged, []) \
            is NotImplemented
    runs[0].find_races()
    assert runs[0].fate == _with_reference(runs[1], monkeypatch)
    assert runs[0].fate == [Undefined(DATA_RACE, 2), Undefined(DATA_RACE, 2)]  # byte 0: tids 0, 2
