"""Parallel-copy lowering: every `parallel_copy` becomes a sequence of moves and swaps.

Following agx_lower_parallel_copy.c in spirit: copies are split into 16-bit halves (a
64-bit copy is four half copies, an immediate is split into its halves, zero-extended as a
phi's immediate is), copies to themselves are dropped, and a half is written only once no
pending copy still reads it. When every pending copy is blocked, the rest are cycles: one is
broken with a swap of two halves (three `xor`s, so no scratch register is needed), and the
copies that read the swapped half read it from its new place. Consecutive half moves (or
swaps) of an aligned pair with an aligned pair are merged back into one 32-bit move (or
swap: Mesa's VectorizeAlignedHalfRegs), immediates into one `mov_imm` per aligned pair.

The result is equal to the parallel semantics for every register, whatever the overlap of
sources and destinations (e.g. a 64-bit copy onto half of itself).

What each copy asks of the lowering is counted (`agxir.machine.paths`): per cycle of its
half copies, a `swap` (two halves exchanged) or a `cycle` (three or more rotated, broken
with swaps), and an `immediate` per copy with an immediate source.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir import ir
from agxir.ir import Function, Immediate, Instruction, Operand, Register
from agxir.machine.opcodes import opcodes_for_level
from agxir.machine.paths import reached
from agxir.opcodes.table import BITOP_ALIASES
from agxir.passes.pass_ import ZERO, Pass

MACHINE_OPCODES = opcodes_for_level("machine")


@dataclass(frozen=True)
class HalfCopy:
    dest: int  # a half
    source: int | None  # a half, or None for an immediate piece
    bits: int = 0  # the immediate piece (16 bits)


def split(copy: Instruction) -> list[HalfCopy]:
    """The register-to-register part of one parallel copy as half copies, in order, and
    immediates as half pieces (a 16-bit immediate, zero-extended)."""
    halves: list[HalfCopy] = []
    for dest, src in zip(copy.dests, copy.srcs, strict=True):
        width = dest.size // 16
        if isinstance(src.ref, Immediate):
            for i in range(width):
                bits = src.ref.bits & 0xFFFF if i == 0 else 0
                halves.append(HalfCopy(dest.half + i, None, bits))
        elif isinstance(src.ref, Register):
            for i in range(width):
                halves.append(HalfCopy(dest.half + i, src.ref.half + i))
    return [h for h in halves if h.source != h.dest]


def uniform_moves(copy: Instruction) -> list[Instruction]:
    """Copies from uniforms read no register, so they go last, each one whole move."""
    return [
        Instruction(MACHINE_OPCODES["bitop"], dest, [src, ZERO], {"tt": BITOP_ALIASES["mov"]})
        for dest, src in zip(copy.dests, copy.srcs, strict=True)
        if not isinstance(src.ref, Immediate | Register)
    ]


def sequence(copies: list[HalfCopy], break_cycles: bool = True) -> list[tuple[str, int, int]]:
    """Moves ("mov", dest, source), immediates ("imm", dest, bits) and swaps ("swap", a, b)
    whose sequential effect equals the parallel copy."""
    pending = {copy.dest: copy for copy in copies}
    if len(pending) != len(copies):
        raise ValueError("a parallel copy writes one half twice")
    steps: list[tuple[str, int, int]] = []
    while pending:
        read = {c.source for c in pending.values() if c.source is not None}
        ready = [d for d in pending if d not in read]
        if ready:
            for dest in ready:
                copy = pending.pop(dest)
                if copy.source is None:
                    steps.append(("imm", dest, copy.bits))
                else:
                    steps.append(("mov", dest, copy.source))
            continue
        # Only cycles are left: every pending destination is also read.
        dest, copy = next(iter(pending.items()))
        if not break_cycles:  # the bug zoo's: a plain move, clobbering the cycle
            steps.append(("mov", dest, copy.source))
            del pending[dest]
            continue
        source = copy.source
        steps.append(("swap", dest, source))
        del pending[dest]
        for other, waiting in list(pending.items()):
            if waiting.source == dest:
                pending[other] = HalfCopy(other, source)
        if source in pending and pending[source].source == source:
            del pending[source]
    return steps


def cycles(copies: list[HalfCopy]) -> list[int]:
    """The lengths of the cycles among half copies (each destination read by the copy into
    the next, back to the first): what no order of plain moves can do. Chains hanging off a
    cycle are not counted; they are sequenced before it breaks."""
    source_of = {c.dest: c.source for c in copies if c.source is not None}
    lengths: list[int] = []
    done: set[int] = set()
    for start in source_of:
        path: list[int] = []
        at: int | None = start
        while at in source_of and at not in done and at not in path:
            path.append(at)
            at = source_of[at]
        if at in path:
            lengths.append(len(path) - path.index(at))
        done.update(path)
    return lengths


def count_paths(copy: Instruction, halves: list[HalfCopy]) -> None:
    """What this copy asks of the lowering (see the module docstring)."""
    lengths = cycles(halves)
    reached("swap", sum(1 for n in lengths if n == 2))
    reached("cycle", sum(1 for n in lengths if n > 2))
    reached("immediate", sum(1 for src in copy.srcs if isinstance(src.ref, Immediate)))


def _register(half: int, size: int = 16) -> Operand:
    return Operand(Register(half, size))


def _mov(dest: int, source: int, size: int) -> Instruction:
    return Instruction(MACHINE_OPCODES["bitop"], Register(dest, size),
                       [_register(source, size), ZERO], {"tt": BITOP_ALIASES["mov"]})


def _xor(dest: int, a: int, b: int, size: int = 16) -> Instruction:
    return Instruction(MACHINE_OPCODES["bitop"], Register(dest, size),
                       [_register(a, size), _register(b, size)], {"tt": BITOP_ALIASES["xor"]})


def _imm(dest: int, bits: int, size: int) -> Instruction:
    return Instruction(MACHINE_OPCODES["mov_imm"], Register(dest, size), [], {"value": bits})


def emit(steps: list[tuple[str, int, int]], xor_swaps: bool = True) -> list[Instruction]:
    out: list[Instruction] = []
    index = 0
    while index < len(steps):
        kind, a, b = steps[index]
        nxt = steps[index + 1] if index + 1 < len(steps) else None
        pair = nxt == ("swap", a + 1, b + 1) and a % 2 == 0 and b % 2 == 0
        if kind == "swap" and xor_swaps:
            size = 32 if pair else 16
            out += [_xor(a, a, b, size), _xor(b, a, b, size), _xor(a, a, b, size)]
            index += pair
        elif kind == "swap":  # the bug zoo's: the second move reads the first's result
            out += [_mov(a, b, 16), _mov(b, a, 16)]
        elif kind == "mov" and nxt == ("mov", a + 1, b + 1) and a % 2 == 0 and b % 2 == 0:
            out.append(_mov(a, b, 32))
            index += 1
        elif kind == "imm" and nxt is not None and nxt[:2] == ("imm", a + 1) and a % 2 == 0:
            out.append(_imm(a, b | (nxt[2] << 16), 32))
            index += 1
        elif kind == "mov":
            out.append(_mov(a, b, 16))
        else:
            out.append(_imm(a, b, 16))
        index += 1
    return out


def lower_copies(fn: Function, split=split, sequence=sequence, emit=emit) -> bool:
    if fn.level != ir.MACHINE:
        raise ValueError(f"lower-copies takes a machine-level function, not {fn.level}")
    changed = False
    for block in fn.blocks:
        lowered: list[Instruction] = []
        for ins in block.instructions:
            if ins.name != "parallel_copy":
                lowered.append(ins)
                continue
            changed = True
            halves = split(ins)
            count_paths(ins, halves)
            lowered += emit(sequence(halves)) + uniform_moves(ins)
        block.instructions = lowered
    return changed


PASS = Pass("lower-copies", "parallel copies into moves, swaps and immediates", lower_copies)
