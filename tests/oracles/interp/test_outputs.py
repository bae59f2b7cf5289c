"""`PackedOutputs` behaves as the tuple of per-thread output tuples it stands for."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from oracles.interp.outputs import PackedOutputs
from oracles.outcomes import Returned, first_difference


def _tuples(values: np.ndarray, written: np.ndarray) -> tuple:
    """The reference: slot by lane rows as each lane's tuple, None where unwritten."""
    return tuple(tuple(int(values[s, t]) if written[s, t] else None
                       for s in range(values.shape[0])) for t in range(values.shape[1]))


def _rows(rng, slots: int, lanes: int):
    values = rng.integers(0, 2**64, (slots, lanes), dtype=np.uint64, endpoint=False)
    written = rng.random((slots, lanes)) < rng.choice([0.5, 1.1])
    return np.where(written, values, np.uint64(0)), written


@pytest.mark.parametrize("seed", range(20))
def test_each_set_reads_as_its_tuples(seed):
    rng = np.random.default_rng(seed)
    threads = [int(n) for n in rng.integers(1, 9, int(rng.integers(1, 5)))]
    slots = int(rng.integers(0, 4))
    values, written = _rows(rng, slots, sum(threads))
    first = 0
    for packed, count in zip(PackedOutputs.per_set(values, written, threads), threads, strict=True):
        want = _tuples(values[:, first:first + count], written[:, first:first + count])
        first += count
        assert packed == want and want == packed and not packed != want
        assert tuple(packed) == want and len(packed) == count and list(packed) == list(want)
        assert packed[0] == want[0] and packed[-1] == want[-1] and packed[1:] == want[1:]
        assert hash(packed) == hash(want) and repr(packed) == repr(want)
        assert pickle.loads(pickle.dumps(packed)) == want


def test_packed_equality_is_the_tuples_equality():
    rng = np.random.default_rng(1)
    values, written = _rows(rng, 2, 6)
    a, = PackedOutputs.per_set(values, written, [6])
    b, = PackedOutputs.per_set(values.copy(), written.copy(), [6])
    assert a == b
    other = values.copy()
    other[1, 3] ^= np.uint64(1)
    written[1, 3] = True
    c, = PackedOutputs.per_set(other, written, [6])
    assert (a == c) == (_tuples(values, written) == _tuples(other, written)) and a != c
    # A value left in an unwritten lane is no difference: the bytes differ, the tuples not.
    hidden_values, hidden_written = values.copy(), written.copy()
    hidden_written[0, 2] = False
    hidden_values[0, 2] = 7
    cleared = hidden_values.copy()
    cleared[0, 2] = 0
    d, = PackedOutputs.per_set(hidden_values, hidden_written, [6])
    e, = PackedOutputs.per_set(cleared, hidden_written, [6])
    assert d == e
    # Different slot counts are different outputs, as tuples of different lengths are.
    f, = PackedOutputs.per_set(values[:1], written[:1], [6])
    assert f != a


def test_no_slots_is_an_empty_tuple_per_thread():
    empty, = PackedOutputs.per_set(np.zeros((0, 3), np.uint64), np.zeros((0, 3), bool), [3])
    assert empty == ((), (), ()) and len(empty) == 3


def test_first_difference_reads_packed_outputs():
    values = np.array([[1, 2, 3]], dtype=np.uint64)
    written = np.ones((1, 3), dtype=bool)
    source = Returned({}, PackedOutputs.per_set(values, written, [3])[0])
    changed = values.copy()
    changed[0, 1] = 9
    target = Returned({}, PackedOutputs.per_set(changed, written, [3])[0])
    assert first_difference(source, source) is None
    assert first_difference(source, target) == "thread 1 output slot 0: input 0x2, output 0x9"
    assert first_difference(source, Returned({}, ((1,), (2,), (3,)))) is None
