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
from oracles.interp.emit import NumpyEmitter
from oracles.interp.lanes import Lanes
from oracles.interp.runner import DEFAULT_FUEL, compiled_block, outcomes_of, stacked_lanes
from oracles.outcomes import Outcome

NUM_HALVES = 256
GARBAGE = 0xDEAD  # what a never-written half holds (xor its index and lane, so it varies)
_DONE = np.iinfo(np.int64).max


def _read_register(register: Register) -> str:
    parts = [f"H[{register.half}]"]
    for i in range(1, register.size // 16):
        parts.append(f"(H[{register.half + i}] << {16 * i})")
    return " | ".join(parts)


class WaveEmitter(NumpyEmitter):
    """The numpy emitter with registers and masked, immediately stored writes."""

    vreg_widths: dict[str, int] = {}  # vreg name -> its widest access, where that is wider

    def local(self, ref):
        if isinstance(ref, Register):
            return self.temp(_read_register(ref))
        if isinstance(ref, VirtualRegister):
            if ref.size < self.vreg_widths.get(ref.name, ref.size):  # the low bits only
                return self.temp(f"V['{ref.name}'] & {self.const((1 << ref.size) - 1, 64)}")
            return self.temp(f"V['{ref.name}']")
        return super().local(ref)

    def write(self, dest, value: str) -> None:
        if isinstance(dest, Register):
            for i, half in enumerate(dest.halves):
                piece = value if dest.size == 16 else f"(({value}) >> {16 * i}) & 0xFFFF"
                self.lines.append(f"H[{half}] = where(act, {piece}, H[{half}])")
            return
        name = dest.name
        if isinstance(dest, VirtualRegister) and dest.size < self.vreg_widths.get(name, dest.size):
            keep = self.const(((1 << 64) - 1) ^ ((1 << dest.size) - 1), 64)  # the rest stays
            low = self.const((1 << dest.size) - 1, 64)
            value = f"(V[{name!r}] & {keep}) | (({value}) & {low})"
        self.lines.append(f"V[{name!r}] = where(act, {value}, V[{name!r}])")
        if isinstance(dest, Value):
            self.local_of[dest] = f"V[{name!r}]"


@dataclass
class WaveBlock:
    run: Callable
    length: int
    branch: tuple[str, int] | None  # ("jmp_exec_any"|"jmp_exec_none", target position)
    stops: bool


class CompiledWave:
    """A function of the exec, vreg or machine level compiled to one Python function per block."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.lane_instructions = 0
        position = {block: i for i, block in enumerate(fn.blocks)}
        self._number = position  # block numbers in layout order, once (LB holds them)
        self.names = sorted(
            {d.name for ins in fn.instructions() for d in ins.defs() if not isinstance(d, Register)}
            | {s.ref.name for ins in fn.instructions() for s in ins.srcs
               if isinstance(s.ref, Value | VirtualRegister)}
        )
        self.output_slots = 1 + max(
            (ins.attrs["slot"] for ins in fn.instructions() if ins.name == "export"), default=-1
        )
        # A wave branch ends a unit of straight-line code: what follows it in its block runs
        # only when the wave falls through (Mesa's `jmp_exec_any; pop_exec` loop ends).
        segments: list[tuple[object, list, bool]] = []  # (block, instructions, first of block)
        first_unit: dict[object, int] = {}
        for block in fn.blocks:
            first_unit[block] = len(segments)
            current: list = []
            first = True
            for ins in block.instructions:
                current.append(ins)
                if ins.name in WAVE_BRANCHES:
                    segments.append((block, current, first))
                    current, first = [], False
            if current or first:
                segments.append((block, current, first))
        emitter = WaveEmitter()
        widths: dict[str, set[int]] = {}
        for ins in fn.instructions():
            for ref in [s.ref for s in ins.srcs] + ins.defs():
                if isinstance(ref, VirtualRegister):
                    widths.setdefault(ref.name, set()).add(ref.size)
        emitter.vreg_widths = {name: max(sizes) for name, sizes in widths.items() if len(sizes) > 1}
        self.blocks: list[WaveBlock] = []
        for block, instructions, first in segments:
            source, branch, stops = self._emit_unit(
                emitter, instructions, position[block], first_unit, first
            )
            run = compiled_block(source)  # cached by text, as the SSA interpreter's are
            self.blocks.append(WaveBlock(run, len(instructions), branch, stops))
        self.constants = list(emitter.constants)

    def _emit_unit(self, em: WaveEmitter, instructions, number: int, first_unit, first: bool):
        em.begin_block()
        branch = None
        stops = False
        phis = [ins for ins in instructions if ins.is_phi]
        marked = not first
        for ins in instructions:
            em.instruction = ins
            if ins.is_phi:
                continue
            if not marked and ins.name not in ("else_icmp", "else_fcmp"):
                self._emit_phis(em, phis, first_unit)
                em.lines.append(f"LB[act] = {number}")
                marked = True
            update = EXEC_UPDATES.get(ins.name)
            if update is not None:
                r0l = em.temp("H[0]")
                new = update(em, ins, r0l)
                em.lines.append(f"H[0] = where(here, {new}, H[0])")
                em.lines.append("act = here & (H[0] == 0)")
                em.local_of = {k: v for k, v in em.local_of.items() if not isinstance(k, Value)}
            elif ins.name in WAVE_BRANCHES:
                branch = (ins.name, first_unit[ins.blocks[0]])
            elif ins.name == "stop":
                stops = True
            elif ins.name == "parallel_copy":
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
            if isinstance(phi.dest, Register | VirtualRegister):
                expression = em.local(phi.dest)
            else:
                expression = f"V[{phi.dest.name!r}]"
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
        C = {value: np.full(lanes, value, dtype=np.uint64) for value in self.constants}
        lane_index = np.arange(lanes, dtype=np.uint64)
        H = [((GARBAGE ^ half ^ lane_index) & 0xFFFF) | 1 for half in range(NUM_HALVES)]
        V = {name: (0xDEADBEEF ^ lane_index * 0x9E3779B1) & 0xFFFFFFFF for name in self.names}
        waves = len(input_sets)
        at = np.zeros(waves, dtype=np.int64)  # each wave's block position
        steps = np.zeros(waves, dtype=np.int64)
        # Per lane: instructions of the blocks it was active at the start or the end of.
        active_steps = np.zeros(lanes, dtype=np.int64)
        act = np.ones(lanes, dtype=bool)
        LB = np.full(lanes, -1, dtype=np.int64)
        executed = 0
        last = len(self.blocks)
        if last == 0:
            at[:] = _DONE
        with np.errstate(all="ignore"):
            while (at != _DONE).any():
                pos = int(at.min())
                here_waves = at == pos
                here = here_waves[lane_set]
                compiled = self.blocks[pos]
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
                exhausted = here_waves & (steps > fuel) & (at != _DONE)
                if exhausted.any():
                    X.out_of_fuel(exhausted[lane_set], fuel, active_steps)
                    at[exhausted] = _DONE
                if X.newly_dead:
                    at[X.dead_sets] = _DONE
                    X.newly_dead = False
        X.find_races()
        self.lane_instructions = executed
        self.set_steps = [int(n) for n in steps]
        return self._outcomes(X, input_sets, buffers)

    def _outcomes(self, X: Lanes, input_sets, buffers) -> list[Outcome]:
        return outcomes_of(X, input_sets, buffers, self.output_slots, self.set_steps)


def run_wave(fn: Function, input_sets: Sequence[InputSet], fuel: int = DEFAULT_FUEL) -> list[Outcome]:
    """Run an exec, vreg or machine function: one wave per input set."""
    return CompiledWave(fn).run(input_sets, fuel)
