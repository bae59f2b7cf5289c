"""The copy-lowering checker: a sequentialized parallel copy must leave every register as
the parallel copy would, and everything else must be untouched.

Per block, both programs are executed symbolically from the same symbolic register file
(each half holds the symbol of its entry value). A symbol is an XOR of atoms (a half's
entry value, an immediate piece, a uniform's piece, an instruction's result), so a swap by
three `xor`s is recognised as a swap. The lowered program's instructions are aligned
greedily with the original's: the counterpart of the next original instruction (the same
text, reading the same symbols), or a move (`mov`, `xor` of 16-bit halves, `mov_imm`). At
the end of each block every half must hold the same symbol in both. No inputs are needed.
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Instruction, Register, Uniform
from agxir.opcodes.table import BITOP_ALIASES
from agxir.text import format_instruction

Symbol = frozenset


def _atoms(*atoms) -> Symbol:
    return frozenset(atoms)


def _xor(a: Symbol, b: Symbol) -> Symbol:
    return a ^ b


class _Registers:
    def __init__(self) -> None:
        self.halves: dict[int, Symbol] = {}

    def get(self, half: int) -> Symbol:
        return self.halves.get(half, _atoms(("entry", half)))

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


def _move(registers: _Registers, ins: Instruction) -> bool:
    """Apply `ins` if it is a move the lowering may emit; False if it is not one."""
    if not isinstance(ins.dest, Register):
        return False
    if ins.name == "mov_imm":
        value = ins.attrs["value"]
        for piece, half in enumerate(ins.dest.halves):
            registers.halves[half] = _atoms(("imm", (value >> (16 * piece)) & 0xFFFF))
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


def _lowered_block(new, expected, tags, original: _Registers) -> str | None:
    """None when `new` realizes `expected` (texts and reads of the original's non-copy
    instructions) and ends with the original's registers; else the first difference. A
    lowered move that reads like the next original instruction is tried both ways."""
    instructions = new.instructions

    def attempt(i: int, position: int, lowered: _Registers) -> str | None:
        while i < len(instructions):
            ins = instructions[i]
            text = format_instruction(ins)
            matches = position < len(expected) and expected[position] == (text, lowered.read(ins))
            if matches:
                alternative = _Registers()
                alternative.halves = dict(lowered.halves)
                lowered.write_result(ins, tags[position])
                found = attempt(i + 1, position + 1, lowered)
                if found is None or not _move(alternative, ins):
                    return found
                lowered = alternative
            elif not _move(lowered, ins):
                want = expected[position][0] if position < len(expected) else "the end of the block"
                return (f"in {new.name}, `{text}` where `{want}` should read what it read "
                        f"before the copies were lowered")
            i += 1
        if position != len(expected):
            return f"in {new.name}, `{expected[position][0]}` is missing"
        for half in sorted(set(original.halves) | set(lowered.halves)):
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
    for old, new in zip(before.blocks, after.blocks, strict=True):
        original = _Registers()
        expected: list[tuple[str, tuple]] = []
        tags: list[int] = []
        for index, ins in enumerate(old.instructions):
            if ins.name == "parallel_copy":
                _parallel(original, ins)
            else:
                expected.append((format_instruction(ins), original.read(ins)))
                tags.append(index)
                original.write_result(ins, index)
        found = _lowered_block(new, expected, tags, original)
        if found:
            errors.append(found)
    return errors
