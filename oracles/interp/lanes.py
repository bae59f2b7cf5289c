"""Per-run state the emitted code talks to: device memory, outputs and undefined behaviour.

Buffers are placed as `oracles.memory_model` says. The threads of one input set are one wave
for a ballot (up to 32 threads; a larger run is several waves of 32, thread t in wave t // 32
giving bit t mod 32, as AGX would split it): a ballot reduces over the lanes of its wave that
run it, and is undefined while the wave's threads have taken different ways at a branch (the
runner marks the wave `diverged`) and have not yet met again, all of them, in a block on no
cycle of the CFG (`rejoined`: see `ballot`). Each input set has its own memory. Two threads of one input set touching the same byte,
where at least one of them writes it, is a data race and undefined: the result would
otherwise depend on the order threads are scheduled in, which passes may change. The race
check's search is the lane VM's (oracles/interp/lanevm_src/races.c) where it is built, else
`racing_threads`, its numpy reference.
"""

from __future__ import annotations

import numpy as np

from oracles.interp.vm import LANEVM
from oracles.memory_model import DATA_RACE, OUT_OF_BOUNDS
from oracles.outcomes import OutOfFuel, Undefined

_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32}
DIVERGENT_BALLOT = "ballot in divergent control flow"
WAVE_WIDTH = 32


# The race check's search in C (None: the lane VM is not built, or built before races.c).
native_races = getattr(LANEVM, "races", None)


def in_place_accesses(in_place: list, start_list: list[int]) -> list[tuple]:
    """The lane VM's in-place accesses (`Lanes.accessed_in_place`'s entries) as logged ones,
    (lanes, flat byte offsets, nbytes, writing)."""
    touched = []
    for buffer, address, act, nbytes, writing, _ in in_place:
        lanes = np.flatnonzero(act)
        offset = (address[lanes] - np.uint64((buffer + 1) << 32)).view(np.int64)
        touched.append((lanes, offset + start_list[buffer], nbytes, writing))
    return touched


def racing_threads(lane_set, tid, n_sets: int, width: int, touched: list) -> list[int]:
    """The race search, by numpy (the reference of lanevm_src/races.c): per input set, the
    highest thread id of the first byte (in byte order) of its memory that two different
    threads touched, at least one of them writing; -1 where none was. `touched` holds
    (lanes, flat byte offsets, nbytes, writing) per access; a lane's set and thread id are
    `lane_set[lane]` and `tid[lane]`, its byte `flat` of `width` in its set's memory."""
    sets, cells, threads, writes = [], [], [], []
    for lanes, flat, nbytes, writing in touched:
        sets.append(np.repeat(lane_set[lanes], nbytes))
        cells.append((flat[:, None] + np.arange(nbytes)).ravel())
        threads.append(np.repeat(tid[lanes].astype(np.int64), nbytes))
        writes.append(np.full(len(lanes) * nbytes, writing))
    found = [-1] * n_sets
    if not touched:
        return found
    set_of = np.concatenate(sets)
    key = set_of * width + np.concatenate(cells)
    thread = np.concatenate(threads)
    write = np.concatenate(writes)
    if not len(key):
        return found
    order = np.argsort(key, kind="stable")
    key, thread, write, set_of = key[order], thread[order], write[order], set_of[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    lowest = np.minimum.reduceat(thread, starts)
    highest = np.maximum.reduceat(thread, starts)
    written = np.logical_or.reduceat(write, starts)
    racing = (lowest != highest) & written
    for group in np.flatnonzero(racing):  # in byte order: a set's first racing byte counts
        s = int(set_of[starts[group]])
        if found[s] < 0:
            found[s] = int(highest[group])
    return found


class LaneLayout:
    """What a batched run's lanes are, fixed by its input sets alone: each lane's input set
    and thread id, the buffers' places in memory, the initial memory image and the waves.
    The harness runs the same input sets on every step's output of a program, so a layout
    is built once and shared by the runs (`Lanes.of`): nothing here is written by a run."""

    def __init__(self, lane_set, tid, buffer_sizes, initial_contents, output_slots):
        self.lane_set = lane_set
        self.tid = tid
        self.n_sets = len(initial_contents)
        self.sizes = np.asarray(buffer_sizes or [0], dtype=np.int64)
        self.size_list = [int(size) for size in buffer_sizes]
        starts, total = [], 0
        for size in buffer_sizes:
            starts.append(total)
            total += (size + 7) & ~7
        self.starts = np.asarray(starts or [0], dtype=np.int64)
        self.start_list = starts
        self.n_buffers = len(buffer_sizes)
        self.memory = np.zeros((self.n_sets, max(total, 8)), dtype=np.uint8)
        for s, contents in enumerate(initial_contents):
            for k, data in enumerate(contents):
                if data:
                    start = starts[k]
                    self.memory[s, start : start + len(data)] = np.frombuffer(data, np.uint8)
        self.output_shape = (max(output_slots, 1), len(lane_set))
        # Lanes are grouped by set, threads in order: a wave starts at every 32nd thread.
        wave_start = (tid % WAVE_WIDTH) == 0
        self.wave_of = np.cumsum(wave_start) - 1
        self.wave_starts = np.flatnonzero(wave_start)
        set_start = np.ones(len(lane_set), dtype=bool)
        set_start[1:] = lane_set[1:] != lane_set[:-1]
        self.set_starts = np.flatnonzero(set_start)  # every set has a thread: none empty
        for array in (lane_set, tid, self.sizes, self.starts, self.memory, self.wave_of,
                      self.wave_starts, self.set_starts):
            array.flags.writeable = False


class Lanes:
    """Memory, outputs and per-input-set fate for one batched run."""

    def __init__(self, lane_set, tid, buffer_sizes, initial_contents, output_slots):
        self._begin(LaneLayout(lane_set, tid, buffer_sizes, initial_contents, output_slots))

    @classmethod
    def of(cls, layout: LaneLayout) -> Lanes:
        """A run's fresh state over a (shared) layout: only what a run writes is new."""
        lanes = cls.__new__(cls)
        lanes._begin(layout)
        return lanes

    def _begin(self, layout: LaneLayout) -> None:
        self.layout = layout
        self.lane_set = layout.lane_set
        self.tid = layout.tid
        self.n_sets = layout.n_sets
        self.sizes = layout.sizes
        self.starts = layout.starts
        self.n_buffers = layout.n_buffers
        self.memory = layout.memory.copy()
        self.accesses: list = []
        self.in_place: list = []  # accesses the lane VM made itself, logged lazily
        self.stored = np.zeros(max(self.n_buffers, 1), dtype=bool)
        # Slot by lane, so an export writes one contiguous row; `outputs`/`written` are
        # their lane-by-slot views.
        self.output_rows = np.zeros(layout.output_shape, dtype=np.uint64)
        self.written_rows = np.zeros(layout.output_shape, dtype=bool)
        self.fate: list[Undefined | OutOfFuel | None] = [None] * self.n_sets
        self.dead_sets = np.zeros(self.n_sets, dtype=bool)
        self.newly_dead = False
        self.wave_of = layout.wave_of
        self.wave_starts = layout.wave_starts
        self.diverged = np.zeros(len(self.wave_starts), dtype=bool)

    # --- fates -------------------------------------------------------------------------------
    def undefined(self, lanes_hit, reason: str) -> None:
        for lane in np.flatnonzero(lanes_hit):
            s = int(self.lane_set[lane])
            if self.fate[s] is None:
                self.fate[s] = Undefined(reason, int(self.tid[lane]))
                self.dead_sets[s] = True
                self.newly_dead = True

    def out_of_fuel(self, lanes_hit, fuel: int, active_steps=None) -> None:
        """The input sets of `lanes_hit` ran out of `fuel`; `active_steps` (per lane, all
        lanes) is what each lane executed while active, for `OutOfFuel.active_steps`."""
        for s in np.unique(self.lane_set[lanes_hit]):
            if self.fate[s] is None:
                most = 0
                if active_steps is not None:
                    most = int(active_steps[self.lane_set == s].max())
                self.fate[s] = OutOfFuel(fuel, most)
                self.dead_sets[s] = True
                self.newly_dead = True

    # --- memory ---------------------------------------------------------------------------------
    def _locate(self, address, nbytes: int, act):
        """The active lanes in bounds, their flat byte offsets and buffers (one buffer
        number, or one per lane); out-of-bounds active lanes are UB. The common case, every
        active lane inside the buffer the first one names, is found in a few whole-array
        operations: below that buffer's base an address wraps to a huge offset."""
        lanes = act.nonzero()[0]  # act is a 1-D bool row: flatnonzero's wrappers skipped
        if not len(lanes):
            return lanes, None, None
        at = address if len(lanes) == len(address) else address[lanes]
        number = int(at[0]) >> 32
        buffer = number - 1
        if 0 <= buffer < self.n_buffers:
            last = self.layout.size_list[buffer] - nbytes
            if last >= 0:
                offset = at - np.uint64(number << 32)
                if (offset <= np.uint64(last)).all():
                    flat = offset.view(np.int64)
                    start = self.layout.start_list[buffer]
                    return lanes, flat + start if start else flat, buffer
        return self._locate_any(address, nbytes, act)

    def _locate_any(self, address, nbytes: int, act):
        number = (address >> np.uint64(32)).astype(np.int64) - 1
        offset = (address & np.uint64(0xFFFFFFFF)).astype(np.int64)
        known = (number >= 0) & (number < self.n_buffers)
        number = np.where(known, number, 0)
        inside = known & (offset + nbytes <= self.sizes[number])
        outside = act & ~inside
        if outside.any():
            self.undefined(outside, OUT_OF_BOUNDS)
        good = act & inside
        lanes = np.flatnonzero(good)
        return lanes, (self.starts[number] + offset)[good], number[lanes]

    def _log(self, lanes, flat, buffers, nbytes: int, writing: bool) -> None:
        if writing:
            self.stored[buffers] = True
        self.accesses.append((lanes, flat, buffers, nbytes, writing))

    def accessed_in_place(self, buffer: int, address, act, nbytes: int, writing: bool,
                          disjoint: bool = False) -> None:
        """Logs an access the lane VM made itself (oracles/interp/lanevm_src/memory.c): every
        active lane (`act` nonzero) inside `buffer`, as `_locate` would have found them.
        `address` and `act` are kept (they must be the caller's copies) and turned into the
        log's lanes and offsets only if the race check needs them. `disjoint`: the VM saw
        that no two of its lanes of one input set touch a common byte."""
        if writing:
            self.stored[buffer] = True
        self.in_place.append((buffer, address, act, nbytes, writing, disjoint))

    def find_races(self) -> None:
        """Makes undefined every input set in which two threads touched one byte and at
        least one of them wrote it. Checked once, after the run, over all accesses: the
        answer does not depend on the order the accesses happened in. The search is the
        lane VM's (lanevm_src/races.c) where it is built, else `racing_threads`."""
        if not self.stored.any():
            return
        # Only a buffer something was stored to can race.
        in_place = [entry for entry in self.in_place if self.stored[entry[0]]]
        self.in_place.clear()
        if len(in_place) == 1 and in_place[0][5] and not any(
                writing or self._touches_stored(buffers) for _, _, buffers, _, writing in self.accesses):
            return  # the only access to a stored buffer, and the VM saw it disjoint
        logged = []  # (lanes, flat, nbytes, writing) of the logged accesses to stored buffers
        for lanes, flat, buffers, nbytes, writing in self.accesses:
            if not writing:
                if isinstance(buffers, int):
                    if not self.stored[buffers]:
                        continue
                else:
                    keep = self.stored[buffers]
                    if not keep.any():
                        continue
                    lanes, flat = lanes[keep], flat[keep]
            logged.append((lanes, flat, nbytes, writing))
        width = self.memory.shape[1]
        threads = NotImplemented
        if native_races is not None:
            threads = native_races(self.lane_set, self.tid, self.n_sets, width, self.starts,
                                   logged, in_place)
        if threads is NotImplemented:  # not built, or arrays the C does not take
            touched = logged + in_place_accesses(in_place, self.layout.start_list)
            if self._disjoint(touched, width):
                return
            threads = racing_threads(self.lane_set, self.tid, self.n_sets, width, touched)
        for s, thread in enumerate(threads):
            if thread >= 0 and (self.fate[s] is None or isinstance(self.fate[s], OutOfFuel)):
                self.fate[s] = Undefined(DATA_RACE, thread)

    def _touches_stored(self, buffers) -> bool:
        return bool(self.stored[buffers]) if isinstance(buffers, int) else bool(self.stored[buffers].any())

    def _disjoint(self, touched, width: int) -> bool:
        """Whether no two of these accesses share a byte of one input set's memory: then
        nothing races (a race needs a shared byte), and the reference's byte-by-byte search
        is skipped (the C search costs less than this test: it has none).
        Sorted by first byte, each access must start after every earlier one ends."""
        if len(touched) == 1:
            lanes, flat, nbytes, _ = touched[0]
            first = self.lane_set[lanes] * width + flat
            first.sort()
            return bool((first[1:] - first[:-1] >= nbytes).all())
        firsts = [self.lane_set[lanes] * width + flat for lanes, flat, _, _ in touched]
        first = np.concatenate(firsts)
        end = np.concatenate([start + nbytes for start, (_, _, nbytes, _) in zip(firsts, touched)])
        order = np.argsort(first, kind="stable")
        first, end = first[order], end[order]
        return bool((first[1:] >= np.maximum.accumulate(end)[:-1]).all())

    # Where every lane takes part (most accesses), the lanes need no gathering or scattering.
    def load(self, address, nbytes: int, act) -> np.ndarray:
        lanes, flat, buffers = self._locate(address, nbytes, act)
        if not len(lanes):
            return np.zeros(len(address), dtype=np.uint64)
        self._log(lanes, flat, buffers, nbytes, writing=False)
        view = self.memory.view(_VIEW[nbytes])
        index = flat // nbytes if nbytes > 1 else flat
        if len(lanes) == len(address):
            return view[self.lane_set, index].astype(np.uint64)
        result = np.zeros(len(address), dtype=np.uint64)
        result[lanes] = view[self.lane_set[lanes], index]
        return result

    def store(self, address, value, nbytes: int, act) -> None:
        lanes, flat, buffers = self._locate(address, nbytes, act)
        if not len(lanes):
            return
        self._log(lanes, flat, buffers, nbytes, writing=True)
        view = self.memory.view(_VIEW[nbytes])
        index = flat // nbytes if nbytes > 1 else flat
        if len(lanes) == len(address):
            view[self.lane_set, index] = value.astype(_VIEW[nbytes])
        else:
            view[self.lane_set[lanes], index] = value[lanes].astype(_VIEW[nbytes])

    # --- the wave --------------------------------------------------------------------------------
    def branched(self, act, cond) -> None:
        """Marks diverged every wave whose lanes at this branch go both ways."""
        waves = len(self.wave_starts)
        taken = np.bincount(self.wave_of[act & cond], minlength=waves) > 0
        self.diverged |= taken & (np.bincount(self.wave_of[act & ~cond], minlength=waves) > 0)

    def rejoined(self, act, unfinished) -> None:
        """Before a block on no cycle runs: a wave whose unfinished lanes are all here has
        rejoined. Each lane runs such a block at most once, so they are all in the same
        dynamic instance of it, as the machine level runs it (once, every one of them
        active). In a block on a cycle, lanes waiting together may be in different
        iterations, so only a wave that never split there counts as together."""
        waves = len(self.wave_starts)
        here = np.bincount(self.wave_of[act], minlength=waves)
        left = np.bincount(self.wave_of[unfinished], minlength=waves)
        self.diverged &= ~((here == left) & (here > 0))

    def ballot(self, cond, act) -> np.ndarray:
        """Per lane, the mask of its wave's lanes that run this with `cond` true (bit = thread
        id mod 32). Defined only while the wave is not diverged: then every unfinished
        thread of the wave is here, in the same dynamic instance, on the SSA and the machine
        level alike. Otherwise the interpreter's schedule (which lanes happen to wait at a
        block together, maybe from different loop iterations) would decide the result, so
        it is undefined, as a data race is."""
        if self.diverged.any():
            hit = act & self.diverged[self.wave_of]
            if hit.any():
                self.undefined(hit, DIVERGENT_BALLOT)
        bit = np.uint64(1) << (self.tid & np.uint64(WAVE_WIDTH - 1))
        bits = np.where(act & cond, bit, np.uint64(0))
        return np.bitwise_or.reduceat(bits, self.wave_starts)[self.wave_of]

    @property
    def outputs(self) -> np.ndarray:
        """Each lane's exported values, lane by slot."""
        return self.output_rows.T

    @property
    def written(self) -> np.ndarray:
        """Which slots each lane exported, lane by slot."""
        return self.written_rows.T

    def export(self, slot: int, value, act) -> None:
        np.copyto(self.output_rows[slot], value, where=act)
        np.logical_or(self.written_rows[slot], act, out=self.written_rows[slot])
