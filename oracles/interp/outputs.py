"""One input set's exported outputs as the interpreters hand them to a `Returned`.

`Returned.outputs` is, per thread, a tuple of what it exported to each slot (None where it
exported nothing). Building those tuples for every run cost a fifth of a straight-line
run (256 lanes: a Python int per lane and slot, a tuple per lane), and the harness mostly
only asks whether two runs' outputs are equal. `PackedOutputs` keeps the run's rows as
bytes, answers equality between two packed outputs by comparing those bytes, and builds
the tuples the first time anything else reads it (iterating, indexing, comparing with a
tuple): it behaves as the tuple of tuples it stands for (tests/oracles/interp/test_outputs.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class PackedOutputs(Sequence):
    """The outputs of `threads` threads over `slots` slots: `values`, the bytes of a
    thread-by-slot uint64 array, and `written`, of a thread-by-slot bool one."""

    __slots__ = ("_slots", "_threads", "_values", "_written", "_tuples")

    def __init__(self, slots: int, threads: int, values: bytes, written: bytes):
        self._slots, self._threads = slots, threads
        self._values, self._written = values, written
        self._tuples: tuple | None = None

    @classmethod
    def per_set(cls, values: np.ndarray, written: np.ndarray, threads: list[int]) -> list:
        """Each input set's outputs from a run's `values` and `written` (slot by lane; the
        sets' lanes contiguous, `threads[s]` of them): two conversions per run, then a
        bytes slice per set."""
        slots = values.shape[0]
        lane_values = np.ascontiguousarray(values.T).tobytes()
        lane_written = np.ascontiguousarray(written.T).tobytes()
        found, first = [], 0
        for count in threads:
            end = first + count
            found.append(cls(slots, count, lane_values[8 * slots * first : 8 * slots * end],
                             lane_written[slots * first : slots * end]))
            first = end
        return found

    def _key(self) -> tuple:
        return self._slots, self._threads, self._values, self._written

    def as_tuple(self) -> tuple[tuple[int | None, ...], ...]:
        tuples = self._tuples
        if tuples is None:
            slots, threads = self._slots, self._threads
            if not slots:
                tuples = ((),) * threads
            else:
                values = np.frombuffer(self._values, np.uint64).reshape(threads, slots)
                written = np.frombuffer(self._written, bool).reshape(threads, slots)
                if written.all():
                    tuples = tuple(map(tuple, values.tolist()))
                else:
                    boxed = values.astype(object)
                    boxed[~written] = None
                    tuples = tuple(map(tuple, boxed.tolist()))
            self._tuples = tuples
        return tuples

    def __eq__(self, other) -> bool:
        if isinstance(other, PackedOutputs):
            # Equal bytes are equal outputs; unequal bytes may still be (a value left in an
            # unwritten lane), so the tuples decide then.
            return self._key() == other._key() or self.as_tuple() == other.as_tuple()
        if isinstance(other, tuple):
            return self.as_tuple() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __len__(self) -> int:
        return self._threads

    def __getitem__(self, index):
        return self.as_tuple()[index]

    def __iter__(self):
        return iter(self.as_tuple())

    def __repr__(self) -> str:
        return repr(self.as_tuple())

    def __reduce__(self):  # pickled as the tuple it stands for
        return tuple, (self.as_tuple(),)
