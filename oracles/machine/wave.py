"""The wave interpreter: runs exec, vreg and machine functions as AGX runs a wave.

One input set is one wave. All lanes of a wave share one program counter: blocks run in
layout order, `jmp_exec_any`/`jmp_exec_none` branch the whole wave, `stop` (or falling off
the last block) ends it. Each lane carries AGX's r0l nesting counter in half 0 of its
register file; after every exec-mask instruction a lane is active exactly when r0l == 0,
and before the first one every lane is active. Every instruction writes only active lanes,
so an inactive lane keeps whatever its registers held, and a wrong pass that reads such a
stale value is exposed. Registers never written hold a nonzero garbage pattern.

Storage per lane: 256 16-bit halves (`H`, physical registers and r0l), plus SSA values
(exec level) and virtual registers (vreg level) by name (`V`). A vreg accessed at several
sizes is one storage of its widest size: a narrow access (`v7:16` beside `v7:32`) reads
its low bits, and a narrow write replaces only them, so the rest keeps what it held. Phis, at the exec level and
as the register allocator's register phis, pick per lane the source of the logical
predecessor the lane was last active in.

The emitted code defers writes while the exec mask stays the same: reads of a register or
name written earlier in the unit use the written value, and each write is stored, masked
by the active lanes, once, where stored state is next observed (`WaveEmitter`).

Semantics are not written here: each opcode's row semantics is run against a subclass of
the SSA interpreter's `NumpyEmitter`, and the exec-mask updates come from
`agxir.machine.opcodes`. Several waves (input sets) run in one batch over stacked lanes; the
scheduler runs the earliest block some wave is at, for the lanes of the waves there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agxir.ir import Function, Register, Value, VirtualRegister
from agxir.machine.opcodes import EXEC_UPDATES, WAVE_BRANCHES
from oracles.inputs import InputSet
from oracles.interp import emit_cache, vm
from oracles.interp.emit import Const, NumpyEmitter
from oracles.interp.lanes import Lanes
from oracles.interp.runner import DEFAULT_FUEL, compiled_block, outcomes_of, stacked_lanes
from oracles.outcomes import Outcome

NUM_HALVES = 256
_NAMED = (Value, VirtualRegister)  # operands held by name in V (a tuple: isinstance is faster)
GARBAGE = 0xDEAD  # what a never-written half holds (xor its index and lane, so it varies)
_DONE = np.iinfo(np.int64).max


_GARBAGE_HALVES: dict[int, np.ndarray] = {}


def _garbage_halves(lanes: int) -> np.ndarray:
    """What the halves hold before any write, half by lane: one array per lane count, built
    at once (256 rows one by one were a quarter of a small program's run) and read-only, as
    every run shares it: the code never writes a row in place, it replaces H's entry."""
    rows = _GARBAGE_HALVES.get(lanes)
    if rows is None:
        halves = np.arange(NUM_HALVES, dtype=np.uint64)[:, None]
        rows = ((GARBAGE ^ halves ^ np.arange(lanes, dtype=np.uint64)) & 0xFFFF) | 1
        rows.flags.writeable = False
        if len(_GARBAGE_HALVES) >= 64:
            _GARBAGE_HALVES.clear()
        _GARBAGE_HALVES[lanes] = rows
    return rows


def _garbage_names(lanes: int) -> np.ndarray:
    """What every V name holds before any write (one row, lane by lane)."""
    lane_index = np.arange(lanes, dtype=np.uint64)
    return (0xDEADBEEF ^ lane_index * 0x9E3779B1) & 0xFFFFFFFF


def _vm_unit(block: vm.VMBlock) -> Callable:
    """A lane VM unit behind the signature of a numpy one (so whatever wraps or watches a
    unit sees both alike): V, H and C are `vm.Rows` of one R, where `here` and `act` are
    copied to their rows; the unit returns the new act."""

    def run(V, H, U, C, here, act, LB, X, TID):
        R = H.R
        R[vm.HERE] = here
        R[vm.ACT] = act
        return block.run(R, X, True)

    return run


def _read_register(register: Register) -> str:
    parts = [f"H[{register.half}]"]
    for i in range(1, register.size // 16):
        parts.append(f"(H[{register.half + i}] << {16 * i})")
    return " | ".join(parts)


class WaveEmitter(NumpyEmitter):
    """The numpy emitter with registers and deferred, forwarded masked writes.

    Within a unit, while `act` stays the same, a write is not stored at once: the emitter
    remembers per 16-bit half (and per V name) the unmasked value it now holds, and reads
    use that value directly. `commit` stores each remembered write once, masked by `act`,
    and is called wherever stored state is observed for lanes other than the active ones:
    before an exec-mask update (it reads inactive lanes and changes `act`) and at the end
    of the unit. Inactive lanes compute garbage on forwarded values, but every effect
    (loads, stores, exports, ballots, undefined behaviour) is masked by `act` and every
    commit too, so the garbage is never observed. With `forward=False` every write is
    committed at once and every read goes to storage (the straightforward code, kept as the
    reference the forwarding code is tested against).
    """

    vreg_widths: dict[str, int] = {}  # vreg name -> its widest access, where that is wider
    unit_locals: frozenset[str] = frozenset()  # V names only the unit being emitted uses

    def __init__(self, forward: bool = True):
        super().__init__()
        self.forward = forward
        self.halves: dict[int, tuple[str, int, int]] = {}  # half -> (value, bit offset, width)
        self.names: dict[str, str] = {}  # V name -> the value it holds (at its widest size)
        self.dirty_halves: dict[int, None] = {}  # written since the last commit, in order
        self.dirty_names: dict[str, None] = {}

    def begin_block(self) -> None:
        super().begin_block()
        self.forget()

    def forget(self) -> None:
        """Drop every remembered value: storage is all there is (after a commit)."""
        self.halves.clear()
        self.names.clear()
        self.dirty_halves.clear()
        self.dirty_names.clear()

    def commit(self, final: bool = False) -> None:
        """Store every pending write for the active lanes, then forget. At the end of the
        unit (`final`) a name in `unit_locals` is not stored: no one reads it from storage."""
        mask = None
        for half in self.dirty_halves:
            value, offset, width = self.halves[half]
            if width == 16:
                piece = value
            elif isinstance(value, Const):
                piece = self.const((value.value >> offset) & 0xFFFF, 16)
            else:
                mask = mask or self.const(0xFFFF, 16)
                piece = f"({value} >> {offset}) & {mask}" if offset else f"{value} & {mask}"
            self.lines.append(f"H[{half}] = where(act, {piece}, H[{half}])")
        for name in self.dirty_names:
            if final and name in self.unit_locals:
                continue
            self.lines.append(f"V[{name!r}] = where(act, {self.names[name]}, V[{name!r}])")
        self.forget()

    # --- reads ------------------------------------------------------------------------------
    def local(self, ref):
        if isinstance(ref, Register):
            return self._read_halves(ref)
        if isinstance(ref, _NAMED):
            full = self._read_name(ref.name)
            if isinstance(ref, VirtualRegister) and ref.size < self.vreg_widths.get(ref.name, ref.size):
                return self.trunc(full, 64, ref.size)  # the low bits only
            return full
        return super().local(ref)

    def _read_name(self, name: str) -> str:
        value = self.names.get(name)
        if value is None:
            value = self.names[name] = self.temp(f"V[{name!r}]")
        return value

    def _read_halves(self, register: Register) -> str:
        half, size, halves = register.half, register.size, self.halves
        first = halves.get(half)
        if first is not None and first[1] == 0 and first[2] == size:
            # The common case, first: exactly the value last written (or read) there.
            value = first[0]
            if size == 32:  # (the commonest size, without a generator)
                if halves.get(half + 1) == (value, 16, 32):
                    return value
            elif all(halves.get(half + i) == (value, 16 * i, size) for i in range(1, size // 16)):
                return value
        known = [halves.get(h) for h in register.halves]
        if all(k is None for k in known):
            value = self.temp(_read_register(register))
            for i, half in enumerate(register.halves):
                self.halves[half] = (value, 16 * i, register.size)
            return value
        if all(k is not None and isinstance(k[0], Const) for k in known):
            bits = sum(((k[0].value >> k[1]) & 0xFFFF) << (16 * i) for i, k in enumerate(known))
            return self.const(bits, register.size)
        parts = []
        for i, (half, k) in enumerate(zip(register.halves, known, strict=True)):
            if k is None:
                piece = f"H[{half}]"
            elif k[2] == 16:
                piece = k[0]
            else:
                shifted = f"({k[0]} >> {k[1]})" if k[1] else k[0]
                piece = f"({shifted} & {self.const(0xFFFF, 16)})"
            parts.append(f"({piece} << {16 * i})" if i else piece)
        value = self.temp(" | ".join(parts))
        for i, (half, k) in enumerate(zip(register.halves, known, strict=True)):
            if k is None:
                self.halves[half] = (value, 16 * i, register.size)
        return value

    # --- writes -----------------------------------------------------------------------------
    def write(self, dest, value: str) -> None:
        if isinstance(dest, Register):
            halves, dirty, size = self.halves, self.dirty_halves, dest.size
            for i in range(size // 16):
                half = dest.half + i
                halves[half] = (value, 16 * i, size)
                dirty[half] = None
        else:
            name = dest.name
            if isinstance(dest, VirtualRegister) and dest.size < self.vreg_widths.get(name, dest.size):
                keep = self.const(((1 << 64) - 1) ^ ((1 << dest.size) - 1), 64)  # the rest stays
                low = self.const((1 << dest.size) - 1, 64)
                value = self.temp(f"({self._read_name(name)} & {keep}) | ({value} & {low})")
            self.names[name] = value
            self.dirty_names[name] = None
        if not self.forward:
            self.commit()


def _unit_locals(units: list[list], vreg_widths: dict[str, int]) -> list[frozenset[str]]:
    """Per unit, the V names no other unit reads and this one writes in full before it
    reads them: their last values need not be stored when the unit ends. A phi's names
    are never local (a phi reads its sources, and its destination's old value, from
    storage), nor is any name of a unit with an exec-mask update (lanes it wakes read
    storage, which must hold what the straightforward code would have left there)."""
    owner: dict[str, int] = {}  # name -> the one unit referencing it, or -1
    for k, unit in enumerate(units):
        updates = any(ins.opcode.name in EXEC_UPDATES for ins in unit)
        for ins in unit:
            if updates:
                for ref in [s.ref for s in ins.srcs] + ins.defs():
                    if isinstance(ref, _NAMED):
                        owner[ref.name] = -1
                continue
            is_phi = ins.opcode.name == "phi"
            for src in ins.srcs:  # a read first: the value comes from storage
                ref = src.ref
                if isinstance(ref, _NAMED) and (owner.setdefault(ref.name, -1) != k or is_phi):
                    owner[ref.name] = -1
            for ref in ins.defs():
                if not isinstance(ref, _NAMED):
                    continue
                # A narrow write first keeps the other bits: it reads storage too.
                first = -1 if ref.size < vreg_widths.get(ref.name, ref.size) else k
                if owner.setdefault(ref.name, first) != k or is_phi:
                    owner[ref.name] = -1
    result: list[set[str]] = [set() for _ in units]
    for name, k in owner.items():
        if k >= 0:
            result[k].add(name)
    return [frozenset(names) for names in result]


@dataclass
class WaveBlock:
    run: Callable
    length: int
    branch: tuple[str, int] | None  # ("jmp_exec_any"|"jmp_exec_none", target position)
    stops: bool


class CompiledWave:
    """A function of the exec, vreg or machine level compiled to one executable per unit of
    straight-line code: a lane VM program or a Python function over numpy arrays (`backend`
    as `runner.CompiledFunction`'s). `forward=False` emits the straightforward code (every
    write stored at once): the reference the forwarding code is tested against, not for use."""

    def __init__(self, fn: Function, forward: bool = True, backend: str | None = None):
        backend = backend or vm.DEFAULT_BACKEND
        if backend not in ("auto", "vm", "numpy"):
            raise ValueError(f"unknown interpreter backend {backend!r}")
        self.fn = fn
        self.lane_instructions = 0
        position = {block: i for i, block in enumerate(fn.blocks)}
        self._number = position  # block numbers in layout order, once (LB holds them)
        # One walk over the instructions: V names, vreg access widths, export slots, and
        # the units of straight-line code. A wave branch ends a unit: what follows it in its
        # block runs only when the wave falls through (Mesa's `jmp_exec_any; pop_exec` loop
        # ends).
        names: set[str] = set()
        widths: dict[str, set[int]] = {}
        slots = 0
        segments: list[tuple[object, list, bool]] = []  # (block, instructions, first of block)
        first_unit: dict[object, int] = {}
        for block in fn.blocks:
            first_unit[block] = len(segments)
            current: list = []
            first = True
            for ins in block.instructions:
                current.append(ins)
                refs = [s.ref for s in ins.srcs]
                if ins.dest is not None:
                    refs.append(ins.dest)
                elif ins.dests:
                    refs += ins.dests
                for ref in refs:
                    if isinstance(ref, _NAMED):
                        names.add(ref.name)
                        if isinstance(ref, VirtualRegister):
                            widths.setdefault(ref.name, set()).add(ref.size)
                name = ins.opcode.name
                if name == "export":
                    slots = max(slots, ins.attrs["slot"] + 1)
                elif name in WAVE_BRANCHES:
                    segments.append((block, current, first))
                    current, first = [], False
            if current or first:
                segments.append((block, current, first))
        self.names = sorted(names)
        self.output_slots = slots
        emitter = WaveEmitter(forward)
        emitter.vreg_widths = {name: max(sizes) for name, sizes in widths.items() if len(sizes) > 1}
        unit_locals = _unit_locals([unit for _, unit, _ in segments], emitter.vreg_widths)
        # Each unit is emitted with a table of its own constants, then they join the
        # function's in first-use order; a unit emitted before comes from the cache.
        if emit_cache.enabled:
            prefixes = [(forward, position[block], first, tuple(sorted(unit_locals[k])) if forward else ())
                        for k, (block, _, first) in enumerate(segments)]
            keys = emit_cache.unit_keys([unit for _, unit, _ in segments], prefixes, position,
                                        first_unit=first_unit, vreg_widths=emitter.vreg_widths)
        else:
            keys = [None] * len(segments)
        constants: dict[int, None] = {}
        units = []  # (source, branch, stops) per unit
        for k, (block, instructions, first) in enumerate(segments):
            emitter.unit_locals = unit_locals[k] if forward else frozenset()
            unit, used = emit_cache.emitted(
                emit_cache.WAVE_UNITS, keys[k], emitter,
                lambda instructions=instructions, block=block, first=first: self._emit_unit(
                    emitter, instructions, position[block], first_unit, first))
            emit_cache.merge_constants(constants, used)
            units.append(unit)
        self.sources = sources = [source for source, _, _ in units]
        self.vm = vm.vm_function(sources) if backend != "numpy" else None
        if backend == "vm" and self.vm is None:
            raise ValueError("the lane VM is not built or does not compile every unit")
        self.backend = "vm" if self.vm is not None else "numpy"
        # Python-compiled units are cached by text, as the SSA interpreter's are.
        runs = map(_vm_unit, self.vm.blocks) if self.vm is not None else map(compiled_block, sources)
        self.blocks: list[WaveBlock] = [
            WaveBlock(run, len(instructions), branch, stops)
            for run, (_, instructions, _), (_, branch, stops) in zip(runs, segments, units, strict=True)
        ]
        self.constants = list(constants)

    def _emit_unit(self, em: WaveEmitter, instructions, number: int, first_unit, first: bool):
        em.begin_block()
        branch = None
        stops = False
        phis = [ins for ins in instructions if ins.is_phi]
        marked = not first
        for ins in instructions:
            em.instruction = ins
            name = ins.opcode.name
            if name == "phi":
                continue
            if not marked and name not in ("else_icmp", "else_fcmp"):
                self._emit_phis(em, phis, first_unit)
                em.lines.append(f"LB[act] = {number}")
                marked = True
            update = EXEC_UPDATES.get(name)
            if update is not None:
                # It reads registers of inactive lanes too: they must hold what was stored.
                em.commit()
                r0l = em.temp("H[0]")
                new = update(em, ins, r0l)
                em.lines.append(f"H[0] = where(here, {new}, H[0])")
                em.lines.append("act = here & (H[0] == 0)")
                em.forget()
            elif name in WAVE_BRANCHES:
                branch = (name, first_unit[ins.blocks[0]])
            elif name == "stop":
                stops = True
            elif name == "parallel_copy":
                values = [em.ref_value(src.ref) for src in ins.srcs]
                for dest, value in zip(ins.dests, values, strict=True):
                    em.write(dest, value)
            else:
                result = ins.opcode.semantics(em, ins)
                if ins.dest is not None:
                    em.write(ins.dest, result)
        if not marked:
            self._emit_phis(em, phis, first_unit)
            em.lines.append(f"LB[act] = {number}")
        em.commit(final=True)
        body = list(em.lines) + ["return act"]
        header = "def block(V, H, U, C, here, act, LB, X, TID):"
        return header + "\n" + "\n".join("    " + line for line in body), branch, stops

    def _emit_phis(self, em: WaveEmitter, phis, first_unit) -> None:
        """Every phi reads before any writes; a lane takes the source of the logical
        predecessor it was last active in (`LB` holds block numbers in layout order)."""
        number = self._number
        results = []
        for phi in phis:
            choices = [em.ref_value(src.ref) for src in phi.srcs]
            expression = em.local(phi.dest)
            for src_block, choice in zip(reversed(phi.blocks), reversed(choices), strict=True):
                expression = f"where(LB == {number[src_block]}, {choice}, {expression})"
            results.append((phi.dest, em.temp(expression)))
        for dest, value in results:
            em.write(dest, value)

    # --- running ------------------------------------------------------------------------------
    def run(self, input_sets: Sequence[InputSet], fuel: int = DEFAULT_FUEL) -> list[Outcome]:
        X, U, buffers = stacked_lanes(self.fn, input_sets, self.output_slots)
        lane_set, tid = X.lane_set, X.tid
        lanes = len(lane_set)
        if self.vm is not None:
            # Every storage place is a row of R (LB's holds int64 bits, -1 at first); the
            # units take V, H and C as views of it (`_vm_unit`).
            R = self.vm.start(lanes, tid, U, _garbage_names, _garbage_halves, shared=True)
            V, H, C = (vm.Rows(R, self.vm, kind) for kind in ("V", "H", "C"))
            LB = R[vm.FLOW].view(np.int64)
        else:
            C = {value: np.full(lanes, value, dtype=np.uint64) for value in self.constants}
            H = list(_garbage_halves(lanes))  # each half's row; a write replaces its entry
            # Never mutated in place (a write replaces the entry): one array serves every name.
            V = dict.fromkeys(self.names, _garbage_names(lanes))
            LB = np.full(lanes, -1, dtype=np.int64)
        waves = len(input_sets)
        at = np.zeros(waves, dtype=np.int64)  # each wave's block position
        steps = np.zeros(waves, dtype=np.int64)
        # Per lane: instructions of the blocks it was active at the start or the end of.
        active_steps = np.zeros(lanes, dtype=np.int64)
        act = np.ones(lanes, dtype=bool)
        executed = 0
        most_steps = 0  # no wave has executed more instructions than this
        last = len(self.blocks)
        if last == 0:
            at[:] = _DONE
        everywhere = np.ones(lanes, dtype=bool)  # `here` when every wave is at the block
        all_waves = np.ones(waves, dtype=bool)
        # Most steps find every wave at one block (the waves of a program mostly keep
        # together): then `together` holds, `pos` is where they all are and `at` is not
        # kept, nor masking by `here` done, until they part, end, or one may be out of fuel
        # or dead; the general steps below then take over from `at`.
        together, pos = last > 0, 0
        # While together, on the VM: a unit is run without its wrapper, whose row writes
        # are needed only after the general steps (R's here row holds everyone and its act
        # row the act the last unit returned: `rows_hold_act`); the steps every wave takes
        # are added once when the waves part or end (`pending_steps`), and each lane's
        # active steps then too, in one product over the units' masks (`pending_masks`:
        # the act before the first unit, then what each unit returned).
        vm_units = self.vm.blocks if self.vm is not None else None
        rows_hold_act = False
        pending_steps = 0
        pending_lengths: list[int] = []
        pending_masks: list = []
        set_starts = X.layout.set_starts
        with np.errstate(all="ignore"):
            while True:
                if together:
                    compiled = self.blocks[pos]
                    if vm_units is not None:
                        unit = vm_units[pos]
                        if not rows_hold_act:
                            R[vm.HERE] = 1
                            R[vm.ACT] = act
                        after = unit.run(R, X, True)
                        rows_hold_act = unit.result_kind == "bool" and unit.result_row == vm.ACT
                    else:
                        after = compiled.run(V, H, U, C, everywhere, act, LB, X, tid)
                    if not pending_masks:
                        pending_masks.append(act)
                    pending_masks.append(after)
                    pending_lengths.append(compiled.length)
                    act = after
                    pending_steps += compiled.length
                    executed += lanes * compiled.length
                    following = pos + 1
                    going = following if following < last else _DONE
                    parted = None
                    if compiled.stops:
                        going = _DONE
                    elif compiled.branch is not None:
                        kind, target = compiled.branch
                        any_active = np.logical_or.reduceat(after, set_starts)
                        taken = any_active if kind == "jmp_exec_any" else ~any_active
                        if taken.all():
                            going = target
                        elif taken.any():
                            parted = np.where(taken, target, going)
                    most_steps += compiled.length
                    if parted is None and going != _DONE and most_steps <= fuel and not X.newly_dead:
                        pos = going
                        continue
                    together = False
                    rows_hold_act = False
                    steps += pending_steps
                    pending_steps = 0
                    masks = np.array(pending_masks)
                    active_steps += np.dot(pending_lengths, masks[:-1] | masks[1:])
                    pending_lengths.clear()
                    pending_masks.clear()
                    at[:] = going if parted is None else parted
                    here_waves = all_waves
                else:
                    if not (at != _DONE).any():
                        break
                    pos = int(at.min())
                    here_waves = at == pos
                    if here_waves.all():
                        together = True
                        continue
                    compiled = self.blocks[pos]
                    here = here_waves[lane_set]
                    before = act & here
                    after = compiled.run(V, H, U, C, here, before, LB, X, tid)
                    np.add(active_steps, compiled.length, out=active_steps, where=before | after)
                    act = np.where(here, after, act)
                    steps[here_waves] += compiled.length
                    executed += int(np.count_nonzero(here)) * compiled.length
                    following = pos + 1
                    if compiled.stops:
                        at[here_waves] = _DONE
                    elif compiled.branch is not None:
                        kind, target = compiled.branch
                        any_active = np.bincount(lane_set, weights=after, minlength=waves) > 0
                        taken = any_active if kind == "jmp_exec_any" else ~any_active
                        at[here_waves & taken] = target
                        at[here_waves & ~taken] = following if following < last else _DONE
                    else:
                        at[here_waves] = following if following < last else _DONE
                    most_steps += compiled.length
                if most_steps > fuel:  # else no wave can be out of fuel: nothing to compute
                    exhausted = here_waves & (steps > fuel) & (at != _DONE)
                    if exhausted.any():
                        X.out_of_fuel(exhausted[lane_set], fuel, active_steps)
                        at[exhausted] = _DONE
                if X.newly_dead:
                    at[X.dead_sets] = _DONE
                    X.newly_dead = False
        if self.vm is not None:
            self.vm.hand_outputs(R, X)
        X.find_races()
        self.lane_instructions = executed
        self.set_steps = [int(n) for n in steps]
        return self._outcomes(X, input_sets, buffers)

    def _outcomes(self, X: Lanes, input_sets, buffers) -> list[Outcome]:
        return outcomes_of(X, input_sets, buffers, self.output_slots, self.set_steps)


def run_wave(fn: Function, input_sets: Sequence[InputSet], fuel: int = DEFAULT_FUEL) -> list[Outcome]:
    """Run an exec, vreg or machine function: one wave per input set."""
    return CompiledWave(fn).run(input_sets, fuel)
