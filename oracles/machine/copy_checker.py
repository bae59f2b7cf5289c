"""The copy-lowering checker: a sequentialized parallel copy must leave every register as
the parallel copy would, and everything else must be untouched.

Per block, both programs are executed symbolically from the same symbolic register file
(each half holds the symbol of its entry value). A symbol is an XOR of atoms (a half's
entry value, an immediate piece, a uniform's piece, an instruction's result), so a swap by
three `xor`s is recognised as a swap. The lowered program's instructions are aligned with
the original's: the counterpart of the next original instruction (the same text, reading
the same symbols), or, only where the original had a parallel copy, a move (`mov`, a
16/32-bit `xor`, `mov_imm`). At the end of each block every half the rest of the program
may read (the halves live out of
the block, by a per-half liveness over the logical CFG of the program before lowering: each
lane follows that CFG and a write only reaches the lanes that run it) must hold the same
symbol in both; a lowering may use a dead half as scratch. No inputs are needed.

That per-half liveness (and what it takes each instruction to read and write) is written
here, not imported from `agxir.machine.block_liveness` or `fuse_exec_cmp.accesses` (which
the passes share): it decides which halves the checker compares, so a bug there
that drops a half would otherwise blind the checker to exactly the clobbers the passes
would then also miss. A test (`tests/oracles/machine/test_copy_checker.py`) keeps the two
agreeing on generated programs.
"""

from __future__ import annotations

from agxir.ir import R0L, Block, Function, Immediate, Instruction, Register, Uniform
from agxir.machine.opcodes import EXEC_UPDATES, WAVE_BRANCHES
from agxir.opcodes.table import BITOP_ALIASES
from agxir.text import format_instruction

Symbol = frozenset


def _atoms(*atoms) -> Symbol:
    return frozenset(atoms)


def _xor(a: Symbol, b: Symbol) -> Symbol:
    return a ^ b


_ENTRY: dict[int, Symbol] = {}  # a half's entry symbol, made once (symbols are immutable)


def _entry(half: int) -> Symbol:
    symbol = _ENTRY.get(half)
    if symbol is None:
        symbol = _ENTRY[half] = _atoms(("entry", half))
    return symbol


class _Registers:
    def __init__(self) -> None:
        self.halves: dict[int, Symbol] = {}

    def get(self, half: int) -> Symbol:
        found = self.halves.get(half)
        return found if found is not None else _entry(half)

    def read(self, ins: Instruction) -> tuple:
        return tuple(
            tuple(self.get(h) for h in src.ref.halves) if isinstance(src.ref, Register) else None
            for src in ins.srcs
        )

    def write_result(self, ins: Instruction, tag) -> None:
        if isinstance(ins.dest, Register):
            for piece, half in enumerate(ins.dest.halves):
                self.halves[half] = _atoms(("result", tag, piece))


def _constant(src, piece: int) -> Symbol:
    if isinstance(src.ref, Immediate):
        return _atoms(("imm", src.ref.bits if piece == 0 else 0))
    if isinstance(src.ref, Uniform):
        return _atoms(("uniform", src.ref.name, piece))
    raise TypeError(src.ref)


def _parallel(registers: _Registers, ins: Instruction) -> None:
    moved = {}
    for dest, src in zip(ins.dests, ins.srcs, strict=True):
        for piece, half in enumerate(dest.halves):
            if isinstance(src.ref, Register):
                moved[half] = registers.get(src.ref.half + piece)
            else:
                moved[half] = _constant(src, piece)
    registers.halves.update(moved)


def _half_rotate(ins: Instruction) -> bool:
    """`extr r, r, r, #16` on a 32-bit register r: its two halves swapped, as Mesa's
    agx_lower_parallel_copy.c swaps r0l and r0h (this project's sequentializer uses xors)."""
    return (ins.name == "extr" and ins.dest.size == 32 and ins.attrs.get("mask") == 0
            and ins.srcs[0].ref == ins.dest and ins.srcs[1].ref == ins.dest
            and ins.srcs[2].ref == Immediate(16)
            and not any(s.abs or s.neg for s in ins.srcs))


def _move(registers: _Registers, ins: Instruction) -> bool:
    """Apply `ins` if it is a move the lowering may emit; False if it is not one."""
    if not isinstance(ins.dest, Register):
        return False
    if ins.name == "mov_imm":
        value = ins.attrs["value"]
        for piece, half in enumerate(ins.dest.halves):
            registers.halves[half] = _atoms(("imm", (value >> (16 * piece)) & 0xFFFF))
        return True
    if _half_rotate(ins):  # Mesa's do_swap of a register's two halves (fuzz/mesa/)
        low, high = ins.dest.halves
        registers.halves[low], registers.halves[high] = registers.get(high), registers.get(low)
        return True
    if ins.name != "bitop" or any(s.abs or s.neg for s in ins.srcs):
        return False
    a, b = ins.srcs
    if ins.attrs["tt"] == BITOP_ALIASES["mov"] and b.ref == Immediate(0):
        values = [
            registers.get(a.ref.half + p) if isinstance(a.ref, Register) else _constant(a, p)
            for p in range(ins.dest.size // 16)
        ]
        for half, value in zip(ins.dest.halves, values, strict=True):
            registers.halves[half] = value
        return True
    if ins.attrs["tt"] == BITOP_ALIASES["xor"] and ins.dest.size in (16, 32):
        if isinstance(a.ref, Register) and isinstance(b.ref, Register):
            values = [
                _xor(registers.get(a.ref.half + p), registers.get(b.ref.half + p))
                for p in range(ins.dest.size // 16)
            ]
            for half, value in zip(ins.dest.halves, values, strict=True):
                registers.halves[half] = value
            return True
    return False


def plain_move_source(ins: Instruction):
    """What `dest = mov src` copies unchanged (no modifier, no saturation), else None."""
    if ins.name != "bitop" or ins.sat or ins.attrs.get("tt") != BITOP_ALIASES["mov"]:
        return None
    a, b = ins.srcs
    if b.ref != Immediate(0) or a.abs or a.neg or b.abs or b.neg:
        return None
    return a.ref


def is_identity_move(ins: Instruction) -> bool:
    """`rX = mov rX`: no modifier, no saturation, the same register and size. It changes no
    register, so a lowering may drop it (Mesa removes such moves after allocation, which
    coalescing a chain of SSA movs leaves behind) or keep it; the check ignores it."""
    return isinstance(ins.dest, Register) and plain_move_source(ins) == ins.dest


def _accesses(ins: Instruction) -> tuple[set[int], set[int]]:
    """(halves read, halves written) by `ins`; the exec rows read and write r0l."""
    reads = {h for src in ins.srcs if isinstance(src.ref, Register) for h in src.ref.halves}
    writes = {h for ref in ins.defs() if isinstance(ref, Register) for h in ref.halves}
    if ins.name in EXEC_UPDATES:
        reads.add(R0L.half)
        writes.add(R0L.half)
    elif ins.name in WAVE_BRANCHES:
        reads.add(R0L.half)
    return reads, writes


def live_out_halves(fn: Function) -> dict[Block, set[int]]:
    """The halves some path over the logical CFG may read after each block before writing."""
    blocks = list(dict.fromkeys(fn.blocks))
    local: dict[Block, tuple[set[int], set[int]]] = {}
    for block in blocks:
        exposed: set[int] = set()
        written: set[int] = set()
        for ins in reversed(block.instructions):
            reads, writes = _accesses(ins)
            exposed -= writes
            written |= writes
            exposed |= reads
        local[block] = (exposed, written)
    live_in: dict[Block, set[int]] = {block: set(local[block][0]) for block in blocks}
    live_out: dict[Block, set[int]] = {block: set() for block in blocks}
    changed = True
    while changed:
        changed = False
        for block in reversed(blocks):
            out = set().union(*(live_in.get(s, set()) for s in block.successors))
            live_out[block] = out
            new_in = local[block][0] | (out - local[block][1])
            if new_in != live_in[block]:
                live_in[block] = new_in
                changed = True
    return live_out


def _lowered_block(new, expected, tags, copies_at: set[int], original: _Registers,
                   needed: set[int]) -> str | None:
    """None when `new` realizes `expected` (texts and reads of the original's non-copy
    instructions) and ends with the original's registers; else the first difference.
    Moves may stand only where the original had a parallel copy (`copies_at`: the
    positions in `expected` a copy came just before, len(expected) for the block's end);
    there, a move that reads like the next original instruction is tried both ways."""
    instructions = new.instructions
    tried: dict[tuple, str | None] = {}
    texts: dict[int, str] = {}  # instruction i printed, once however often it is walked

    def attempt(i: int, position: int, lowered: _Registers) -> str | None:
        # Remembered by where both programs are and the register file, so that repeated
        # identical moves cannot make the two readings exponential.
        key = (i, position, frozenset(lowered.halves.items()))
        if key not in tried:
            tried[key] = walk(i, position, lowered)
        return tried[key]

    def walk(i: int, position: int, lowered: _Registers) -> str | None:
        while i < len(instructions):
            ins = instructions[i]
            if is_identity_move(ins):
                i += 1
                continue
            text = texts.get(i)
            if text is None:
                text = texts[i] = format_instruction(ins)
            matches = position < len(expected) and expected[position] == (text, lowered.read(ins))
            if matches and position in copies_at:
                alternative = _Registers()
                alternative.halves = dict(lowered.halves)
                if _move(alternative, ins):
                    lowered.write_result(ins, tags[position])
                    found = attempt(i + 1, position + 1, lowered)
                    if found is None:
                        return None
                    # Both readings fail: report the one taking `ins` as the original's.
                    return None if attempt(i + 1, position, alternative) is None else found
            if matches:
                lowered.write_result(ins, tags[position])
                position += 1
            elif position not in copies_at or not _move(lowered, ins):
                if position < len(expected) and expected[position][0] == text:
                    return (f"in {new.name}, `{text}` does not read what it read before the "
                            f"copies were lowered")
                want = f"`{expected[position][0]}`" if position < len(expected) else "nothing"
                return f"in {new.name}, `{text}` stands where the original has {want}"
            i += 1
        if position != len(expected):
            return f"in {new.name}, `{expected[position][0]}` is missing"
        for half in sorted((set(original.halves) | set(lowered.halves)) & needed):
            if original.get(half) != lowered.get(half):
                return (f"at the end of {new.name}, {Register(half, 16).name} does not hold "
                        f"what the parallel copy put there")
        return None

    return attempt(0, 0, _Registers())


def check_copy_lowering(before: Function, after: Function) -> list[str]:
    """Differences between `before` (machine level, parallel copies) and `after` (its copies
    sequentialized); [] when `after` is exact."""
    if [b.name for b in before.blocks] != [b.name for b in after.blocks]:
        return ["the blocks differ from the input's"]
    errors: list[str] = []
    live_out = live_out_halves(before)
    for old, new in zip(before.blocks, after.blocks, strict=True):
        left = next((ins for ins in new.instructions if ins.name == "parallel_copy"), None)
        if left is not None:
            errors.append(f"in {new.name}, `{format_instruction(left)}` is left after lowering")
            continue
        original = _Registers()
        expected: list[tuple[str, tuple]] = []
        tags: list[int] = []
        copies_at: set[int] = set()
        for index, ins in enumerate(old.instructions):
            if ins.name == "parallel_copy":
                _parallel(original, ins)
                copies_at.add(len(expected))
            elif is_identity_move(ins):
                continue
            else:
                expected.append((format_instruction(ins), original.read(ins)))
                tags.append(index)
                original.write_result(ins, index)
        found = _lowered_block(new, expected, tags, copies_at, original, live_out[old])
        if found:
            errors.append(found)
    return errors
