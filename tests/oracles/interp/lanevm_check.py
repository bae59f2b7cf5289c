"""Runs one block's source both ways for the lane VM compiler's tests: compiled by
`lanevm.compile` and executed by `lanevm.run` over rows of one array R (the test's own
relocation: block-local row k is row k of R), and executed by numpy through
`runner.compiled_block`, on equal random inputs; `differences` lists where they disagree
(storage rows, the returned value and its type, every call made to X, in order, and the
export rows the VM writes in place of numpy's calls).
"""

from __future__ import annotations

import numpy as np

from oracles.interp import lanevm
from oracles.interp.runner import compiled_block

WAVE_HEADER = "def block(V, H, U, C, here, act, LB, X, TID):"


class RecordingLanes:
    """A stand-in for `Lanes`: records every call with its arguments (arrays copied) and
    answers loads and ballots with values that depend on every argument, as the real
    methods do (a ballot reads `act & cond`, so a uint64 condition is not a bool one)."""

    def __init__(self):
        self.calls: list[tuple] = []

    def _record(self, method, *args):
        self.calls.append((method,) + tuple(np.array(a) if isinstance(a, np.ndarray) else a
                                            for a in args))

    def load(self, address, nbytes, act):
        self._record("load", address, nbytes, act)
        mixed = (address * np.uint64(0x9E3779B1) + np.uint64(nbytes)) >> np.uint64(3)
        return np.where(act, mixed, np.uint64(0)).astype(np.uint64)

    def store(self, address, value, nbytes, act):
        self._record("store", address, value, nbytes, act)

    def export(self, slot, value, act):
        self._record("export", slot, value, act)

    def ballot(self, cond, act):
        self._record("ballot", cond, act)
        bits = np.where(act & cond, np.uint64(1) << (np.arange(len(act), dtype=np.uint64) & 31),
                        np.uint64(0))
        return np.full(len(act), np.bitwise_or.reduce(bits), dtype=np.uint64)

    def undefined(self, hit, reason):
        self._record("undefined", hit, reason)


def random_row(rng: np.random.Generator, lanes: int) -> np.ndarray:
    """Lanes of mixed kinds: small ints, 16-, 32- and 64-bit patterns, float specials."""
    choice = rng.integers(0, 5, lanes)
    wide = rng.integers(0, 2**64 - 1, lanes, dtype=np.uint64, endpoint=True)
    specials = np.array([0, 1, 0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000, 0x3F800000,
                         0x7E00, 0x7C00, 0xFC00, 0x8000, 0x3C00, 0xFFFFFFFF, 31, 32, 63, 64],
                        dtype=np.uint64)
    return np.select(
        [choice == 0, choice == 1, choice == 2, choice == 3],
        [rng.integers(0, 70, lanes).astype(np.uint64), wide & np.uint64(0xFFFF),
         wide & np.uint64(0xFFFFFFFF), specials[rng.integers(0, len(specials), lanes)]],
        wide,
    )


def _inputs(externals, rng, lanes):
    """Each external's initial row (uint64 bits) by kind."""
    rows = []
    for kind, key in externals:
        if kind in ("act", "here"):
            rows.append((rng.random(lanes) < 0.7).astype(np.uint64))
        elif kind in ("cf", "LB"):
            rows.append(rng.integers(-1, 4, lanes).astype(np.int64).view(np.uint64))
        elif kind == "TID":
            rows.append(np.arange(lanes, dtype=np.uint64))
        elif kind == "C":
            rows.append(np.full(lanes, key, dtype=np.uint64))
        elif kind == "W":
            rows.append((rng.random(lanes) < 0.5).astype(np.uint64))
        elif kind == "H":
            rows.append(random_row(rng, lanes) & np.uint64(0xFFFF))
        else:
            rows.append(random_row(rng, lanes))
    return rows


def run_vm(compiled, R: np.ndarray, X, unmasked: bool):
    program, externals, callbacks, result, temps = compiled
    ops = np.frombuffer(program, np.int64).reshape(-1, 6)
    pc = lanevm.run(program, R, 0, unmasked)
    while pc >= 0:
        method, dest, args = callbacks[ops[pc, 5]]
        values = [R[v].copy() if kind == "row" else R[v] != 0 if kind == "bool" else v
                  for kind, v in args]
        out = getattr(X, method)(*values)
        if dest >= 0:
            R[dest] = out
        pc = lanevm.run(program, R, pc + 1, unmasked)
    if result[0] == "none":
        return None
    return R[result[1]] != 0 if result[0] == "bool" else R[result[1]].copy()


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return (a.dtype == bool) == (b.dtype == bool) and np.array_equal(
            a.astype(np.uint64), b.astype(np.uint64))
    return a == b


def differences(source: str, seed: int = 0, lanes: int = 37, unmasked: bool = False):
    """Where the VM and numpy disagree on `source` (an empty list: nowhere)."""
    compiled = lanevm.compile(source)
    program, externals, callbacks, result, temps = compiled
    rng = np.random.default_rng(seed)
    initial = _inputs(externals, rng, lanes)
    R = np.zeros((len(externals) + temps, lanes), dtype=np.uint64)
    for row, values in enumerate(initial):
        R[row] = values
    vm_lanes = RecordingLanes()
    vm_result = run_vm(compiled, R, vm_lanes, unmasked)

    wave = source.startswith(WAVE_HEADER)
    V, H, U, C = {}, {}, {}, {}
    act = here = cf = LB = TID = None
    for (kind, key), values in zip(externals, initial, strict=True):
        if kind in ("V", "H", "U", "C"):
            {"V": V, "H": H, "U": U, "C": C}[kind][key] = values.copy()
        elif kind == "act":
            act = values != 0
        elif kind == "here":
            here = values != 0
        elif kind == "cf":
            cf = values.view(np.int64).copy()
        elif kind == "LB":
            LB = values.view(np.int64).copy()
        elif kind == "TID":
            TID = values.copy()
    np_lanes = RecordingLanes()
    block = compiled_block(source)
    with np.errstate(all="ignore"):
        if wave:
            np_result = block(V, H, U, C, here, act, LB, np_lanes, TID)
        else:
            np_result = block(V, U, C, act, cf, unmasked, np_lanes, TID)

    # An export the VM writes as rows (O[slot], W[slot]: compile.c) is a call of X on numpy:
    # numpy's calls to those slots, replayed in order onto the same initial rows, must
    # leave what the VM's rows hold, and are then no longer calls to compare.
    found = []
    rows_of = {(kind, key): row for row, (kind, key) in enumerate(externals)}
    expected = {key: initial[row].copy() for key, row in rows_of.items() if key[0] in "OW"}
    in_rows = {key for kind, key in expected if kind == "O"}
    kept = []
    for call in np_lanes.calls:
        if call[0] == "export" and call[1] in in_rows:
            _, slot, value, mask = call
            mask = np.asarray(mask).astype(bool)
            expected[("O", slot)] = np.where(mask, np.asarray(value).astype(np.uint64),
                                             expected[("O", slot)])
            expected[("W", slot)] = np.where(mask, np.uint64(1), expected[("W", slot)])
        else:
            kept.append(call)
    np_lanes.calls = kept
    for key, want in expected.items():
        if not np.array_equal(R[rows_of[key]], want):
            found.append(f"{key[0]}[{key[1]}]: vm {R[rows_of[key]]} numpy {want}")
    if any(call[0] == "export" and call[1] in in_rows for call in vm_lanes.calls):
        found.append("an export slot written both as rows and by a call")
    if not _same(vm_result, np_result):
        found.append(f"result: vm {vm_result!r} numpy {np_result!r}")
    for row, (kind, key) in enumerate(externals):
        after = {"V": V, "H": H}.get(kind, {}).get(key) if kind in ("V", "H") else None
        if kind == "LB":
            after = LB.view(np.uint64)
        if after is not None and not np.array_equal(np.asarray(after).astype(np.uint64), R[row]):
            found.append(f"{kind}[{key!r}]: vm {R[row]} numpy {after}")
    if len(vm_lanes.calls) != len(np_lanes.calls):
        found.append(f"calls: vm {len(vm_lanes.calls)} numpy {len(np_lanes.calls)}")
    for k, (ours, theirs) in enumerate(zip(vm_lanes.calls, np_lanes.calls)):
        if len(ours) != len(theirs) or not all(_same(a, b) for a, b in zip(ours, theirs)):
            found.append(f"call {k}: vm {ours} numpy {theirs}")
    return found
