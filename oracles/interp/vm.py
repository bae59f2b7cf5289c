"""The lane VM's Python side: blocks of emitted source run in C instead of by numpy.

The extension `oracles.interp.lanevm` (oracles/interp/lanevm_src/, vm.h holds its contract)
compiles one block's emitted source (the text `runner.compiled_block` would give to Python)
to a program of row operations, and runs such a program over `R`, one 2-D uint64 array
holding every storage place of a run as a row and every lane as a column. This module owns
what sits between the extension and the interpreters (oracles/interp/runner.py and
oracles/machine/wave.py), which keep their scheduling and choose which executor runs:

- `LANEVM`, the extension when it is built with both its halves, else None;
- `compiled(source)`: a block's compile result, cached by its text, or None when the
  source holds something outside the VM's language (the interpreter then runs that whole
  function by numpy, the reference executor);
- `VMFunction`: one function's row layout (fixed rows, then one row per V name, per H half,
  per U name and per constant its blocks mention, then temporaries shared by all blocks),
  its blocks' programs relocated into that layout once, the initial rows of a run, and
  the driver that runs a block and performs its calls back into the lanes' state `X`;
- `Rows`: one kind of storage of a run's R looked up by key, as the numpy executor's
  mappings are (the interpreters pass it where a numpy block takes V, H or C).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

try:
    import oracles.interp.lanevm as _extension
except ImportError:  # not built: the interpreters run numpy only
    _extension = None

# The fixed rows, the same in every layout. FLOW is `cf` in the SSA interpreter (the block
# number lanes came from) and `LB` in the wave one (the block a lane was last active in):
# both are int64 held as uint64 bits, -1 before any block.
ACT, HERE, FLOW, TID = 0, 1, 2, 3
FIXED_ROWS = 4
_FIXED = {"act": ACT, "here": HERE, "cf": FLOW, "LB": FLOW, "TID": TID}
# vm.h's OP_CALL and OP_CALLIF: the ops the executor stops at (tests/oracles/interp/test_vm.py
# reads vm.h to check them).
OP_CALL, OP_CALLIF = 29, 30
_CALL_OPS = (OP_CALL, OP_CALLIF)
_EMPTY_SSA = "def block(V, U, C, act, cf, unmasked, X, TID):\n    return None"


def _complete(module) -> bool:
    """Whether both halves of the extension are written (each raised NotImplementedError
    while it was being written): an empty program runs, an empty block compiles."""
    try:
        module.run(np.zeros((1, 6), np.int64), np.zeros((1, 1), np.uint64), 0, True)
        module.compile(_EMPTY_SSA)
    except ValueError:  # written, and (wrongly) refusing the empty block: tests say so
        return True
    except NotImplementedError:
        return False
    return True


LANEVM = _extension if _extension is not None and _complete(_extension) else None
# What the interpreters run when not told: "auto" (the VM where it compiles every block of a
# function, else numpy), "vm" or "numpy".
DEFAULT_BACKEND = "auto"


@dataclass(frozen=True)
class CompiledSource:
    """compile()'s result for one block's text. Its rows are numbered block-locally: 0..E-1
    name `externals[k]`, E..E+temps-1 are temporaries (`VMFunction.relocate` renumbers them)."""

    program: np.ndarray  # (n, 6) int64: op, d, a, b, c, imm
    externals: tuple  # (kind, key) per external row, key None for the fixed rows
    callbacks: tuple  # (method, dest, args) per OP_CALL/OP_CALLIF imm
    result: tuple  # ("none",) | ("bool", row) | ("row", row)
    temps: int
    call_sites: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # Checked once per text, so relocation may index without checking: a row out of
        # range would wrap (a negative one) or fault, never be refused.
        local = self.program[:, 1:5]
        if len(local) and (local.min() < 0 or local.max() >= max(1, len(self.externals) + self.temps)):
            raise ValueError("lane VM program names a row outside its externals and temps")
        # (op index, callback number) of each op the executor stops at, found once per text
        sites = tuple((pc, imm) for pc, (op, imm) in enumerate(self.program[:, [0, 5]].tolist())
                      if op in _CALL_OPS)
        object.__setattr__(self, "call_sites", sites)


_COMPILED: dict[str, CompiledSource | None] = {}
# About 7 KB an entry (the text and its program). Hits come from the steps of the program
# being checked, not across programs: with 50,000 entries a campaign worker grew about 25 MB
# per 100 programs (360 MB at its 900th), and it runs as fast with 8,192 (about 55 MB); the
# numpy path's cache of Python-compiled blocks (runner._BLOCK_CACHE) likewise.
_COMPILED_LIMIT = 8192


def compiled(source: str) -> CompiledSource | None:
    """`source` compiled for the VM, once per distinct text; None when the VM is not built
    or the text is outside its language (a ValueError from the compiler)."""
    try:
        return _COMPILED[source]
    except KeyError:
        pass
    if LANEVM is None:
        return None
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    try:
        program, externals, callbacks, result, temps = LANEVM.compile(source)
    except ValueError:
        block = None
    else:
        code = np.frombuffer(program, np.int64).reshape(-1, 6)
        block = CompiledSource(code, tuple(externals), tuple(callbacks), tuple(result), temps)
    _COMPILED[source] = block
    return block


class VMBlock:
    """One block's program relocated into its function's rows, and the calls it makes."""

    __slots__ = ("program", "calls", "call_at", "result_kind", "result_row")

    def __init__(self, program: np.ndarray, calls: list, result_kind: str, result_row: int,
                 call_sites: tuple = ()):
        self.program = program
        self.calls = calls  # by the imm of an OP_CALL/OP_CALLIF: the callback it makes
        # by the op's index, where the executor stops (no numpy scalar read per call);
        # `call_sites` pairs each such op's index with its imm
        self.call_at = {pc: calls[imm] for pc, imm in call_sites}
        self.result_kind = result_kind
        self.result_row = result_row

    def execute(self, R: np.ndarray, X, unmasked: bool) -> None:
        """Executes the block over R: the C executor runs until a call, Python performs
        it, the executor goes on after it."""
        program, call_at, execute = self.program, self.call_at, _extension.run
        pc = execute(program, R, 0, unmasked)
        while pc >= 0:
            call_at[pc](R, X)
            pc = execute(program, R, pc + 1, unmasked)

    def run(self, R: np.ndarray, X, unmasked: bool):
        """Executes the block; returns what the block's `return` gives."""
        self.execute(R, X, unmasked)
        kind = self.result_kind
        if kind == "bool":
            return R[self.result_row] != 0
        if kind == "row":
            return R[self.result_row].copy()
        return None

    def run_counting(self, R: np.ndarray, X, unmasked: bool) -> tuple:
        """`run`, where the caller only needs to know how many lanes a bool result holds:
        (None, that count); for any other result (its value, -1)."""
        self.execute(R, X, unmasked)
        kind = self.result_kind
        if kind == "bool":
            return None, _extension.count(R, self.result_row)
        if kind == "row":
            return R[self.result_row].copy(), -1
        return None, -1

    def condition(self, R: np.ndarray) -> np.ndarray:
        """A bool result as `run` returns it, read after `run_counting`."""
        return R[self.result_row] != 0


def _in_place(R: np.ndarray, X, address: int, act: int, data: int, nbytes: int,
              store: bool) -> bool:
    """A load into row `data` or a store of it done by the executor's C
    (lanevm_src/memory.c) and logged for the race check, when every active lane is inside
    the buffer the first one names; False, with nothing done, otherwise."""
    layout = X.layout
    buffer, disjoint = _extension.access(R, address, act, data, nbytes, store, X.memory,
                                         layout.lane_set, layout.sizes, layout.starts,
                                         layout.n_buffers)
    if buffer < 0:
        return False
    X.accessed_in_place(buffer, R[address].copy(), R[act] != 0, nbytes, store, disjoint)
    return True


def _callback(method: str, dest: int, args: tuple) -> Callable:
    """What performs one call: X's method with its arguments read from R (a "row" as a VIEW
    of R, valid only during the call: `Lanes` keeps none of its arguments, and X must copy
    what it keeps; a "bool" as nonzero), the result into row `dest`. The calls the compiler
    makes of `Lanes` have closures of their own: the generic one's per-argument readers
    cost as much as the call."""
    kinds = tuple(kind for kind, _ in args)
    values = tuple(value for _, value in args)
    # A load or a store is done in C where every active lane is inside one buffer (most
    # are: `_in_place`), else by `Lanes`, which also judges what is out of bounds.
    if method == "load" and kinds == ("row", "int", "bool") and dest >= 0:
        address, nbytes, act = values

        def load(R: np.ndarray, X) -> None:
            if not _in_place(R, X, address, act, dest, nbytes, False):
                R[dest] = X.load(R[address], nbytes, R[act] != 0)

        return load
    if method == "store" and kinds == ("row", "row", "int", "bool"):
        address, value, nbytes, act = values

        def store(R: np.ndarray, X) -> None:
            if not _in_place(R, X, address, act, value, nbytes, True):
                X.store(R[address], R[value], nbytes, R[act] != 0)

        return store
    if method == "export" and kinds == ("int", "row", "bool"):
        slot, value, act = values

        def export(R: np.ndarray, X) -> None:
            X.export(slot, R[value], R[act] != 0)

        return export
    if method == "undefined" and kinds == ("bool", "str"):
        hit, reason = values

        def undefined(R: np.ndarray, X) -> None:
            X.undefined(R[hit] != 0, reason)

        return undefined
    readers = []
    for kind, value in args:
        if kind == "row":
            readers.append(lambda R, row=value: R[row])
        elif kind == "bool":
            readers.append(lambda R, row=value: R[row] != 0)
        elif kind in ("int", "str"):
            readers.append(lambda R, constant=value: constant)
        else:
            raise ValueError(f"lane VM callback argument of unknown kind {kind!r}")

    def call(R: np.ndarray, X) -> None:
        result = getattr(X, method)(*[read(R) for read in readers])
        if dest >= 0:
            R[dest] = result

    return call


def _relocated_block(block: CompiledSource, program: np.ndarray, rows: Sequence[int]) -> VMBlock:
    """`block` with `program` (already renumbered) and its calls and result renumbered by
    `rows`, the layout's row of each of its local rows."""
    calls = [_callback(method, rows[dest] if dest >= 0 else -1,
                       tuple((kind, rows[value]) if kind in ("row", "bool") else (kind, value)
                             for kind, value in args))
             for method, dest, args in block.callbacks]
    result = block.result
    row = -1 if result[0] == "none" else rows[result[1]]
    return VMBlock(program, calls, result[0], row, block.call_sites)


class VMFunction:
    """A function's blocks for the VM: one row layout for all of them, each block's program
    relocated into it, and the initial rows of a run."""

    def __init__(self, blocks: Sequence[CompiledSource]):
        keys: dict[str, dict] = {"V": {}, "H": {}, "U": {}, "C": {}, "O": {}, "W": {}}
        # Each external once, in first-seen order (as the blocks name them), then by kind.
        for kind, key in dict.fromkeys(chain.from_iterable(block.externals for block in blocks)):
            if kind in _FIXED:
                continue
            if kind not in keys:
                raise ValueError(f"lane VM external of unknown kind {kind!r}")
            keys[kind][key] = None
        self.names = list(keys["V"])
        self.halves = list(keys["H"])
        self.uniforms = list(keys["U"])
        self.constants = list(keys["C"])
        # The export slots the blocks write as rows (compile.c's O and W), in slot order.
        for kind in ("O", "W"):
            keys[kind] = dict.fromkeys(sorted(keys[kind]))
        self.export_slots = list(keys["O"])
        self.row: dict[tuple, int] = {(kind, None): row for kind, row in _FIXED.items()}
        next_row = FIXED_ROWS
        self.first_row = {}
        for kind in ("V", "H", "U", "C", "O", "W"):
            self.first_row[kind] = next_row
            for key in keys[kind]:
                self.row[(kind, key)] = next_row
                next_row += 1
        self.rows_of = {kind: {key: self.row[(kind, key)] for key in keys[kind]} for kind in keys}
        self.temp_base = next_row
        self.rows = next_row + max((block.temps for block in blocks), default=0)
        self.blocks = self._relocated(blocks)
        self._initial: dict[tuple, np.ndarray] = {}  # by lanes and start functions
        self._started: dict[tuple, tuple] = {}  # and by the shared tid and uniforms

    def _relocated(self, blocks: Sequence[CompiledSource]) -> list[VMBlock]:
        """Every block as `relocate` gives it, the programs renumbered in one numpy
        indexing over all of them (per block it was a third of building a function): each
        block's local rows are a stretch of one lookup table, found by adding the block's
        offset into it. The programs are views of one array, each a run of its rows."""
        if not blocks:
            return []
        local_rows = [self._local_rows(block) for block in blocks]
        lookup: list[int] = []
        offsets = []
        for rows in local_rows:
            offsets.append(len(lookup))
            lookup += rows
        lengths = [len(block.program) for block in blocks]
        program = np.concatenate([block.program for block in blocks])
        shift = np.repeat(np.array(offsets, dtype=np.int64), lengths)[:, None]
        program[:, 1:5] = np.array(lookup, dtype=np.int64)[program[:, 1:5] + shift]
        relocated, start = [], 0
        for block, rows, length in zip(blocks, local_rows, lengths):
            relocated.append(_relocated_block(block, program[start : start + length], rows))
            start += length
        return relocated

    def relocate(self, block: CompiledSource) -> VMBlock:
        """The block's program with its local rows (0..E-1: externals[k], E..: temporaries)
        renumbered as this layout's rows, in the d, a, b, c fields of every op alike (an
        op's unused fields hold 0, a valid local row), and its calls' rows likewise."""
        rows = self._local_rows(block)
        program = block.program.copy()
        program[:, 1:5] = np.array(rows, dtype=np.int64)[block.program[:, 1:5]]
        return _relocated_block(block, program, rows)

    def _local_rows(self, block: CompiledSource) -> list[int]:
        """This layout's row of each of the block's local rows (its externals, then its
        temporaries)."""
        rows = list(map(self.row.__getitem__, block.externals))
        rows += range(self.temp_base, self.temp_base + block.temps)
        return rows or [0]  # a block touching no row: its zero fields stay row 0

    def start(self, lanes: int, tid: np.ndarray, uniforms: dict,
              names_start: Callable | None = None,
              halves_start: Callable | None = None, shared: bool = False) -> np.ndarray:
        """A run's rows: act and here ones, FLOW -1, TID, V rows from `names_start(lanes)`
        (one row, or one per name), H rows from `halves_start(lanes)` (a row per half,
        indexed by half number; either 0 when not given), U rows from `uniforms`,
        constants, temporaries 0. All but TID and U are the same for every run at a lane
        count (and the same start functions), so they are built once and copied. `shared`
        says `tid` and `uniforms` are the interpreters' shared set-up of some input sets
        (`runner.stacked_lanes`: never written): once they come a second time, the whole
        start is kept for as long as the same objects come."""
        key = (lanes, names_start, halves_start, id(tid), id(uniforms))
        entry = self._started.get(key) if shared else None
        # The entry holds tid and uniforms, so their ids are not reused while it lives.
        if entry is not None and entry[0] is tid and entry[1] is uniforms and entry[2] is not None:
            return entry[2].copy()
        initial = self._initial.get(key[:3])
        if initial is None:
            initial = np.zeros((self.rows, lanes), dtype=np.uint64)
            initial[ACT] = 1
            initial[HERE] = 1
            initial[FLOW] = np.uint64(0xFFFFFFFFFFFFFFFF)
            v = self.first_row["V"]
            if self.names and names_start is not None:
                initial[v : v + len(self.names)] = names_start(lanes)
            h = self.first_row["H"]
            if self.halves and halves_start is not None:
                initial[h : h + len(self.halves)] = halves_start(lanes)[self.halves]
            c = self.first_row["C"]
            if self.constants:
                values = np.array(self.constants, dtype=np.uint64)[:, None]
                initial[c : c + len(self.constants)] = values
            if len(self._initial) >= 8:
                self._initial.clear()
            self._initial[key[:3]] = initial
        R = initial.copy()
        R[TID] = tid
        u = self.first_row["U"]
        for k, name in enumerate(self.uniforms):
            R[u + k] = uniforms[name]
        if shared:
            if len(self._started) >= 2:  # a run's R may be large (a wave's 256 halves)
                self._started.clear()
            # Kept whole from the second run of these inputs on: most functions run them
            # once, and copying a wave's R for nothing costs what keeping it saves.
            again = entry is not None and entry[0] is tid and entry[1] is uniforms
            self._started[key] = (tid, uniforms, R.copy() if again else None)
        return R

    def hand_outputs(self, R: np.ndarray, X) -> None:
        """Hands the run's exports to the lanes' state `X` at its end: the blocks wrote each
        export into the rows O[slot] (the value) and W[slot] (whether written) where the
        numpy executor calls `X.export` (compile.c `export_in_rows`); this is what those
        calls would have left in `X.output_rows` and `X.written_rows`."""
        slots = self.export_slots
        if not slots:
            return
        # No block of a VM function also exports by a call (`vm_function`), so nothing else
        # wrote X's outputs, and an O row is 0 wherever its W row is.
        o, w, count = self.first_row["O"], self.first_row["W"], len(slots)
        if slots[-1] == count - 1:  # slots 0..n-1 (most functions)
            X.output_rows[:count] = R[o : o + count]
            np.not_equal(R[w : w + count], 0, out=X.written_rows[:count])
        else:
            X.output_rows[slots] = R[o : o + count]
            X.written_rows[slots] = R[w : w + count] != 0


class Rows:
    """The rows of R of one kind of storage ("V" names, "H" halves, "C" constants) looked
    up by key, as the numpy executor's mappings are: `rows[key]` is a view of its row. It
    lets code written against those mappings (a unit's signature, tests reading a half
    after a unit) read the VM's storage."""

    __slots__ = ("R", "index")

    def __init__(self, R: np.ndarray, function: VMFunction, kind: str):
        self.R = R
        self.index = function.rows_of[kind]

    def __getitem__(self, key) -> np.ndarray:
        return self.R[self.index[key]]


def vm_function(sources: Sequence[str]) -> VMFunction | None:
    """The function of these block sources for the VM, or None when the VM is not built or
    some block does not compile (then the whole function runs by numpy)."""
    if LANEVM is None:
        return None
    key = tuple(sources)
    function = _FUNCTIONS.get(key, False)
    if function is not False:
        return function
    blocks = []
    for source in sources:
        block = compiled(source)
        if block is None:
            function = None
            break
        blocks.append(block)
    else:
        # Exports are written as rows and handed over at the end of a run (`hand_outputs`),
        # so a function that also exported by a call would lose their order: numpy runs it.
        in_rows = any(kind == "O" for block in blocks for kind, _ in block.externals)
        by_call = any(method == "export" for block in blocks for method, _, _ in block.callbacks)
        function = None if in_rows and by_call else VMFunction(blocks)
    if len(_FUNCTIONS) >= _FUNCTIONS_LIMIT:
        _FUNCTIONS.clear()
    _FUNCTIONS[key] = function
    return function


# A pipeline's steps often leave a function as it was: the same block texts, the same layout
# and relocated programs (a VMFunction is never written but for its start caches). Few are
# kept, as each holds a start of its runs' size.
_FUNCTIONS: dict[tuple, VMFunction | None] = {}
_FUNCTIONS_LIMIT = 16
