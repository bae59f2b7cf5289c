"""Compiles a function to numpy code once, then runs it over many lanes at a time.

A lane is one thread of one input set. All lanes of a batch run together: the scheduler
repeatedly picks the earliest block (in reverse postorder) that some lane is waiting at,
runs it for every lane, and commits results only for the lanes that are there. Each lane
thus follows its own path in order, on any CFG, irreducible ones included. In a function
with a ballot the runner also tells the lanes where each wave splits at a branch and where
it is whole again (`Lanes.branched`, `Lanes.rejoined`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agxir.cfg import CFG
from agxir.ir import Block, Function, Uniform, Value
from oracles.inputs import InputSet, check_inputs
from oracles.interp import emit_cache, vm
from oracles.interp.emit import NumpyEmitter
from oracles.interp.floats import HELPERS
from oracles.interp.lanes import LaneLayout, Lanes
from oracles.interp.outputs import PackedOutputs
from oracles.memory_model import buffer_base
from oracles.outcomes import Outcome, Returned

DEFAULT_FUEL = 10_000
_DONE = np.iinfo(np.int64).max


@dataclass
class CompiledBlock:
    block: Block
    number: int  # position in fn.blocks: what phis compare `came_from` against
    run: Callable
    length: int
    targets: tuple[int, ...]  # scheduling positions of the successors
    acyclic: bool  # on no cycle of the CFG: a lane runs it at most once


class CompiledFunction:
    """A function turned into one executable block per reachable block: a program of the
    lane VM (oracles/interp/vm.py) or a Python function over numpy arrays, the reference.
    `backend` "auto" takes the VM when it is built and compiles every block, "vm" insists on
    it, "numpy" takes the reference, None `vm.DEFAULT_BACKEND`; the `backend` attribute
    says which one runs. Both give the same outcomes (tests/oracles/interp/test_vm.py)."""

    def __init__(self, fn: Function, backend: str | None = None):
        backend = backend or vm.DEFAULT_BACKEND
        if backend not in ("auto", "vm", "numpy"):
            raise ValueError(f"unknown interpreter backend {backend!r}")
        self.fn = fn
        self.lane_instructions = 0  # executed by the last run, over all lanes
        self.diverged = False  # in the last run, lanes of one input set branched apart
        cfg = CFG(fn)
        self.order = list(cfg.rpo)
        position = {block: i for i, block in enumerate(self.order)}
        number = {block: i for i, block in enumerate(fn.blocks)}
        # Only a function with a ballot needs to know where its waves diverge and rejoin.
        self.value_names, self.output_slots, self.escaping, self.tracks_divergence = _walk(fn)
        cyclic = _blocks_on_cycles(self.order) if self.tracks_divergence else set()
        # Each block is emitted with a table of its own constants, then they join the
        # function's in first-use order; a block emitted before comes from the cache.
        emitter = NumpyEmitter()
        constants: dict[int, None] = {}
        keys = (emit_cache.unit_keys([block.instructions for block in self.order],
                                     [()] * len(self.order), number, self.escaping)
                if emit_cache.enabled else [None] * len(self.order))
        sources = []
        for block, key in zip(self.order, keys, strict=True):
            source, used = emit_cache.emitted(
                emit_cache.SSA_BLOCKS, key, emitter,
                lambda block=block: self._emit_block(emitter, block, number))
            emit_cache.merge_constants(constants, used)
            sources.append(source)
        self.source = "\n\n".join(sources)
        self.constants = list(constants)
        self._constants_by_lanes: dict[int, dict[int, np.ndarray]] = {}
        self.vm = vm.vm_function(sources) if backend != "numpy" else None
        if backend == "vm" and self.vm is None:
            raise ValueError("the lane VM is not built or does not compile every block")
        self.backend = "vm" if self.vm is not None else "numpy"
        runs = map(_vm_block, self.vm.blocks) if self.vm is not None else map(compiled_block, sources)
        self.blocks = [
            CompiledBlock(
                block,
                number[block],
                run,
                len(block.instructions),
                tuple(position[t] for t in block.successors),
                block not in cyclic,
            )
            for block, run in zip(self.order, runs, strict=True)
        ]

    def _emit_block(self, em: NumpyEmitter, block: Block, number: dict) -> str:
        em.begin_block()
        commits = []
        phi_results = []
        for phi in block.phis():
            choices = [em.ref_value(src.ref) for src in phi.srcs]
            expression = choices[-1]
            for src_block, choice in zip(reversed(phi.blocks[:-1]), reversed(choices[:-1]), strict=True):
                expression = f"where(cf == {number[src_block]}, {choice}, {expression})"
            phi_results.append((phi.dest, em.temp(expression)))
        for dest, name in phi_results:
            em.local_of[dest] = name
            if dest in self.escaping:
                commits.append((repr(dest.name), name))
        condition = "None"
        for ins in block.instructions:
            if ins.is_phi:
                continue
            em.instruction = ins
            result = ins.opcode.semantics(em, ins)
            if ins.is_terminator:
                condition = result or "None"
            elif ins.dest is not None:
                em.local_of[ins.dest] = result
                if ins.dest in self.escaping:
                    commits.append((repr(ins.dest.name), result))
        body = list(em.lines)
        if commits:
            body.append("if unmasked:")
            body += [f"    V[{slot}] = {name}" for slot, name in commits]
            body.append("else:")
            body += [f"    V[{slot}] = where(act, {name}, V[{slot}])" for slot, name in commits]
        body.append(f"return {condition}")
        header = "def block(V, U, C, act, cf, unmasked, X, TID):"
        return header + "\n" + "\n".join("    " + line for line in body)

    # --- running ----------------------------------------------------------------------------------
    def run(self, input_sets: Sequence[InputSet], fuel: int = DEFAULT_FUEL) -> list[Outcome]:
        X, uniform_arrays, buffers = stacked_lanes(self.fn, input_sets, self.output_slots)
        lane_set, tid = X.lane_set, X.tid
        lanes = len(lane_set)
        if self.vm is not None:
            # Every storage place is a row of R (values start 0); the blocks take the values
            # and constants as views of it (`_vm_block`), the scheduler came_from as cf's
            # row read as int64.
            R = self.vm.start(lanes, tid, uniform_arrays, shared=True)
            values, constants = vm.Rows(R, self.vm, "V"), vm.Rows(R, self.vm, "C")
            came_from = R[vm.FLOW].view(np.int64)
        else:
            constants = self._constant_arrays(lanes)
            # Never mutated in place, so one zero array stands for every value not yet defined.
            zero = np.zeros(lanes, dtype=np.uint64)
            values = dict.fromkeys(self.value_names, zero)
            came_from = np.full(lanes, -1, dtype=np.int64)
        at = np.zeros(lanes, dtype=np.int64)
        steps = np.zeros(lanes, dtype=np.int64)
        first = [True] * len(self.blocks)
        alive = lanes
        most_steps = 0  # no lane has executed more instructions than this
        executed = 0
        diverged, sets = False, len(input_sets)
        # While every lane is alive and at one block (`together`: most steps of most runs),
        # `pos` says where and `at` is not kept, until lanes part, end, may be out of fuel or
        # die; every lane is active then (`everyone`, never written).
        everyone = np.ones(lanes, dtype=bool)
        together, pos = True, 0
        # While together, on the VM: the blocks run without their wrapper (R's act row holds
        # everyone from the first such block on: `act_row_everyone`), a branch asks C how
        # many lanes take it instead of making the bool array, and the steps every lane
        # takes are added to `steps` once, when the lanes part or end (`pending`).
        vm_blocks = self.vm.blocks if self.vm is not None else None
        act_row_everyone = False
        pending = 0
        with np.errstate(all="ignore"):
            while alive:
                if together:
                    act, active = everyone, lanes
                else:
                    pos = int(at.min())
                    act = at == pos
                    active = int(np.count_nonzero(act))
                    together = active == lanes
                compiled = self.blocks[pos]
                # Lanes elsewhere may still need the values this block redefines, unless
                # this is the first time it runs or every live lane is here.
                unmasked = first[pos] or active == alive
                if self.tracks_divergence and compiled.acyclic:
                    X.rejoined(act, everyone if together else at != _DONE)
                taking = -1  # on the VM together: how many lanes take a two-way branch
                if together and vm_blocks is not None:
                    if not act_row_everyone:
                        R[vm.ACT] = 1
                        act_row_everyone = True
                    cond, taking = vm_blocks[pos].run_counting(R, X, unmasked)
                    pending += compiled.length
                else:
                    cond = compiled.run(
                        values, uniform_arrays, constants, act, came_from, unmasked, X, tid
                    )
                    act_row_everyone = False
                    np.add(steps, compiled.length, out=steps, where=act)
                first[pos] = False
                executed += active * compiled.length
                most_steps += compiled.length
                targets = compiled.targets
                if together:
                    going = _DONE
                    if len(targets) == 1:
                        going = targets[0]
                    elif targets and taking == lanes:  # every lane takes it: no wave splits
                        going = targets[0]
                    elif targets and taking == 0:
                        going = targets[1]
                    elif targets:
                        if cond is None:  # lanes part (the VM counted them): the array now
                            cond = vm_blocks[pos].condition(R)
                        if self.tracks_divergence:
                            X.branched(act, cond)
                        taken = act & cond
                        if taken.all():
                            going = targets[0]
                        elif not taken.any():
                            going = targets[1]
                        else:  # the lanes part
                            fell = act & ~cond
                            if not diverged:
                                diverged = bool((np.bincount(lane_set[taken], minlength=sets)
                                                 * np.bincount(lane_set[fell], minlength=sets)).any())
                            at[taken] = targets[0]
                            at[fell] = targets[1]
                            going = None
                    if targets:
                        came_from.fill(compiled.number)
                    else:
                        alive = 0
                    if going is not None and going != _DONE and most_steps <= fuel and not X.newly_dead:
                        pos = going
                        continue
                    together = False
                    if pending:
                        steps += pending
                        pending = 0
                    if going is not None:
                        at[:] = going
                elif not targets:
                    at[act] = _DONE
                    alive -= active
                elif len(targets) == 1:
                    at[act] = targets[0]
                    came_from[act] = compiled.number
                else:
                    if self.tracks_divergence:
                        X.branched(act, cond)
                    taken, fell = act & cond, act & ~cond
                    if not diverged and taken.any() and fell.any():
                        diverged = bool((np.bincount(lane_set[taken], minlength=sets)
                                         * np.bincount(lane_set[fell], minlength=sets)).any())
                    at[taken] = targets[0]
                    at[fell] = targets[1]
                    came_from[act] = compiled.number
                if most_steps > fuel:
                    exhausted = act & (steps > fuel)
                    if exhausted.any():
                        X.out_of_fuel(exhausted, fuel, steps)
                if X.newly_dead:
                    at[X.dead_sets[lane_set]] = _DONE
                    X.newly_dead = False
                    alive = int(np.count_nonzero(at != _DONE))
        if self.vm is not None:
            self.vm.hand_outputs(R, X)
        X.find_races()
        self.lane_instructions = executed
        # Whether lanes of one input set took different ways at some branch (a feature the
        # campaign's guidance records; the ballot's per-wave bookkeeping is X's).
        self.diverged = diverged
        self.set_steps = _most_per_set(steps, X)
        return self._outcomes(X, input_sets, buffers)

    def _constant_arrays(self, lanes: int) -> dict[int, np.ndarray]:
        """Constants broadcast to the lane count; reused across runs, never written."""
        cached = self._constants_by_lanes.get(lanes)
        if cached is None:
            cached = {value: np.full(lanes, value, dtype=np.uint64) for value in self.constants}
            self._constants_by_lanes[lanes] = cached
        return cached

    def _outcomes(self, X: Lanes, input_sets, buffers) -> list[Outcome]:
        return outcomes_of(X, input_sets, buffers, self.output_slots, self.set_steps)


def _vm_block(block: vm.VMBlock) -> Callable:
    """A lane VM block behind the signature of a numpy one (so whatever wraps or watches a
    block sees both alike): V and C are `vm.Rows` of one R, where `act` is copied to its
    row; the block returns its branch condition."""

    def run(V, U, C, act, cf, unmasked, X, TID):
        R = V.R
        R[vm.ACT] = act
        return block.run(R, X, unmasked)

    return run


def stacked_lanes(
    fn: Function, input_sets: Sequence[InputSet], output_slots: int
) -> tuple[Lanes, dict[str, np.ndarray], list[Uniform]]:
    """The lanes of one batched run (shared with the wave interpreter): every input set's
    threads stacked set by set, thread ids in order, after checking each input set against
    `fn`. Returns the `Lanes` (`X.lane_set`: each lane's input set, `X.tid`: its thread id),
    each uniform's value per lane (a buffer's base address, a scalar from its set; a scalar
    the set does not give is 0; read-only, shared by runs) and the buffer uniforms in order.
    What depends only on the input sets and `fn`'s uniforms is built once (`_lane_setup`)."""
    buffers = [u for u in fn.uniforms if u.is_buffer]
    layout, uniform_arrays = _lane_setup(fn, input_sets, output_slots)
    return Lanes.of(layout), uniform_arrays, buffers


# The harness runs the same input sets on every step's output of a program: their set-up is
# kept, keyed by the identity of the InputSet objects (held here, so an id is not reused while
# its entry lives), the uniforms' signature and the output slots, and each use checks the
# sets still hold what they held (InputSet is frozen, its dicts are not).
_SETUPS: dict[tuple, tuple] = {}
_SETUPS_LIMIT = 64


def _lane_setup(fn: Function, input_sets: Sequence[InputSet], output_slots: int):
    signature = tuple((u.name, u.size, u.buffer_bytes) for u in fn.uniforms)
    key = (tuple(map(id, input_sets)), signature, output_slots)
    entry = _SETUPS.get(key)
    if entry is not None:
        held, contents, layout, uniform_arrays = entry
        if all(s is h for s, h in zip(input_sets, held, strict=True)) and contents == [
            (s.threads, s.scalars, s.buffers) for s in input_sets
        ]:
            return layout, uniform_arrays
    for input_set in input_sets:
        check_inputs(fn, input_set)
    counts = [s.threads for s in input_sets]
    lane_set = np.repeat(np.arange(len(input_sets)), counts)
    tid = np.concatenate([np.arange(n) for n in counts]).astype(np.uint64)
    lanes = len(lane_set)
    buffers = [u for u in fn.uniforms if u.is_buffer]
    layout = LaneLayout(
        lane_set,
        tid,
        [u.buffer_bytes for u in buffers],
        [[s.buffers.get(u.name, b"") for u in buffers] for s in input_sets],
        output_slots,
    )
    uniform_arrays = {}
    for uniform in fn.uniforms:
        if uniform.is_buffer:
            value = buffer_base(buffers.index(uniform))
            row = np.full(lanes, value, dtype=np.uint64)
        else:
            per_set = np.array([s.scalars.get(uniform.name, 0) for s in input_sets], np.uint64)
            row = per_set[lane_set]
        row.flags.writeable = False
        uniform_arrays[uniform.name] = row
    if len(_SETUPS) >= _SETUPS_LIMIT:
        _SETUPS.clear()
    # bytes() is the same object for bytes, a copy of a (mutable) bytearray
    contents = [(s.threads, dict(s.scalars), {k: bytes(v) for k, v in s.buffers.items()})
                for s in input_sets]
    _SETUPS[key] = (tuple(input_sets), contents, layout, uniform_arrays)
    return layout, uniform_arrays


def _most_per_set(steps, X: Lanes) -> list[int]:
    """The most steps of any lane of each input set (a set's lanes are contiguous)."""
    return np.maximum.reduceat(steps, X.layout.set_starts).tolist()


def outcomes_of(X: Lanes, input_sets, buffers, slots: int, steps=None) -> list[Outcome]:
    """Each input set's outcome from the lanes' final state (shared with the wave
    interpreter): its fate if it ended early, else its memory and outputs (and `steps[s]`,
    the most instructions a thread or the wave of set s executed). The outputs stay the
    run's rows until read (`PackedOutputs`)."""
    outcomes: list[Outcome] = []
    # Every set's buffers are slices of one copy of the memory (bytes slices, not numpy's).
    image = X.memory.tobytes()
    width = X.memory.shape[1]
    places = [(uniform.name, int(X.starts[k]), uniform.buffer_bytes)
              for k, uniform in enumerate(buffers)]
    outputs = PackedOutputs.per_set(X.output_rows[:slots], X.written_rows[:slots],
                                    [input_set.threads for input_set in input_sets])
    for s in range(len(input_sets)):
        if X.fate[s] is not None:
            outcomes.append(X.fate[s])
            continue
        base = s * width
        memory = {name: image[base + offset : base + offset + size]
                  for name, offset, size in places}
        outcomes.append(Returned(memory, outputs[s], int(steps[s]) if steps is not None else 0))
    return outcomes


_BLOCK_CACHE: dict[str, Callable] = {}
_BLOCK_CACHE_LIMIT = 8192  # as the lane VM's cache of compiled texts (vm._COMPILED_LIMIT)
_CONSTANT = re.compile(r"C\[0x([0-9a-f]+)\]")
HOIST_LINES = 256  # a block at least this long reads its constants into locals first


def compiled_block(source: str) -> Callable:
    """A block's function, compiled once per distinct source text. Passes change few blocks,
    so the variants of a program under test mostly reuse their input's compiled blocks."""
    function = _BLOCK_CACHE.get(source)
    if function is None:
        if len(_BLOCK_CACHE) >= _BLOCK_CACHE_LIMIT:
            _BLOCK_CACHE.clear()
        namespace = dict(HELPERS)
        exec(compile(hoisted_constants(source), "<agx block>", "exec"), namespace)
        function = _BLOCK_CACHE[source] = namespace["block"]
    return function


def hoisted_constants(source: str) -> str:
    """`source` (a block's function) with each constant `C[0x..]` read once into a local
    `c_..` at its start, when the block is long: Python compiles a local's name a fifth
    faster than a subscript, and a long block's compile is most of its setup (a
    100,000-instruction block takes seconds). A short block is left as it is: there the
    reads at its start would cost what they save. The same arrays are read either way."""
    if source.count("\n") < HOIST_LINES:
        return source
    header, body = source.split("\n", 1)
    values = dict.fromkeys(_CONSTANT.findall(body))
    prologue = "".join(f"    c_{value} = C[0x{value}]\n" for value in values)
    return header + "\n" + prologue + _CONSTANT.sub(r"c_\1", body)


def _blocks_on_cycles(blocks: list[Block]) -> set[Block]:
    """The blocks some path leads from back to themselves: those in a strongly connected
    component of more than one block, or with an edge to themselves. Tarjan's algorithm on
    an explicit stack: linear in the CFG, whatever its size or depth."""
    index: dict[Block, int] = {}
    low: dict[Block, int] = {}
    on_stack: set[Block] = set()
    component: list[Block] = []
    on_cycles: set[Block] = set()
    for root in blocks:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        component.append(root)
        on_stack.add(root)
        work = [(root, iter(root.successors))]
        while work:
            block, pending = work[-1]
            for succ in pending:
                if succ is block:
                    on_cycles.add(block)
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    component.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(succ.successors)))
                    break
                if succ in on_stack:
                    low[block] = min(low[block], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[block])
                if low[block] == index[block]:
                    members = []
                    while True:
                        member = component.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member is block:
                            break
                    if len(members) > 1:
                        on_cycles.update(members)
    return on_cycles


def _walk(fn: Function) -> tuple[list[str], int, set, bool]:
    """One walk over `fn`: the names of the values it defines in order, its output slots,
    the values some other block reads (only these need storing between blocks; a phi reads
    its sources on entry to its block, from storage, even in a single-block loop), and
    whether it has an instruction that reads its wave (a ballot)."""
    value_names = []
    slots = 0
    wave = False
    home = {}  # destination -> its block
    used_in = {}  # value read by no phi -> the first block reading it
    escaping = set()
    for block in fn.blocks:
        for ins in block.instructions:
            row = ins.opcode
            dest = ins.dest
            if dest:
                home[dest] = block
                if isinstance(dest, Value):
                    value_names.append(dest.name)
            wave = wave or row.wave
            if row.name == "export":
                slots = max(slots, ins.attrs["slot"] + 1)
            elif row.name == "phi":
                escaping.update(ins.uses())
                continue
            for src in ins.srcs:
                value = src.ref
                if isinstance(value, Value) and used_in.setdefault(value, block) is not block:
                    escaping.add(value)
    escaping.update(value for value, block in used_in.items() if home.get(value) is not block)
    return value_names, slots, escaping, wave


def run(fn: Function, input_sets: Sequence[InputSet], fuel: int = DEFAULT_FUEL,
        backend: str | None = None) -> list[Outcome]:
    return CompiledFunction(fn, backend).run(input_sets, fuel)
