"""The SSA IR data model: uniforms, values, operands, instructions, blocks, functions.

This module owns only the shape of a program. What an opcode means, which operands and
attributes it takes, and how it prints all come from the opcode table (`agxir.opcodes`).
Values are compared by identity; a function's structural equality is its printed text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agxir.opcodes.spec import Opcode

SIZES = (16, 32, 64)


@dataclass(eq=False)
class Value:
    """An SSA value: defined once, `size` bits wide (registers are untyped)."""

    name: str
    size: int

    def __repr__(self) -> str:
        return f"%{self.name}:{self.size}"


@dataclass(eq=False)
class Uniform:
    """A function input shared by all threads.

    `buffer_bytes` is set for a 64-bit uniform that holds the base address of a device
    buffer of that many bytes; the interpreter places the buffer and fills in the address.
    """

    name: str
    size: int
    buffer_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.buffer_bytes is not None and self.size != 64:
            raise ValueError(f"buffer uniform {self.name} must be 64-bit, not {self.size}")

    @property
    def is_buffer(self) -> bool:
        return self.buffer_bytes is not None

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Immediate:
    """An immediate source. Integer immediates are 16-bit values extended like a narrow
    source; float immediates hold the 8-bit AGX minifloat encoding."""

    bits: int


@dataclass(frozen=True)
class Operand:
    """A source: an SSA value, a uniform or an immediate, with AGX source modifiers."""

    ref: Value | Uniform | Immediate
    abs: bool = False
    neg: bool = False

    @property
    def value(self) -> Value | None:
        return self.ref if isinstance(self.ref, Value) else None

    @property
    def is_immediate(self) -> bool:
        return isinstance(self.ref, Immediate)

    @property
    def is_uniform(self) -> bool:
        return isinstance(self.ref, Uniform)

    @property
    def size(self) -> int:
        """Natural width before extension: immediates are 16-bit, like AGX's."""
        if isinstance(self.ref, Immediate):
            return 16
        return self.ref.size

    def with_ref(self, ref: Value | Uniform | Immediate) -> Operand:
        return Operand(ref, self.abs, self.neg)


@dataclass(eq=False)
class Instruction:
    """One operation. `blocks` holds branch targets for terminators and the incoming
    block of each source for phis; `attrs` holds the immediates the opcode declares."""

    opcode: Opcode
    dest: Value | None
    srcs: list[Operand]
    attrs: dict[str, int | str] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    sat: bool = False

    @property
    def name(self) -> str:
        return self.opcode.name

    @property
    def is_phi(self) -> bool:
        return self.opcode.name == "phi"

    @property
    def is_terminator(self) -> bool:
        return self.opcode.terminator

    def uses(self) -> Iterator[Value]:
        for src in self.srcs:
            if isinstance(src.ref, Value):
                yield src.ref

    def __repr__(self) -> str:
        return f"<{self.dest!r} = {self.opcode.name} ...>"


@dataclass(eq=False)
class Block:
    name: str
    instructions: list[Instruction] = field(default_factory=list)

    @property
    def terminator(self) -> Instruction | None:
        if self.instructions and self.instructions[-1].is_terminator:
            return self.instructions[-1]
        return None

    @property
    def successors(self) -> list[Block]:
        term = self.terminator
        return list(term.blocks) if term is not None else []

    def phis(self) -> Iterator[Instruction]:
        for ins in self.instructions:
            if not ins.is_phi:
                break
            yield ins

    def __repr__(self) -> str:
        return f"<block {self.name}>"


@dataclass(eq=False)
class Function:
    name: str
    uniforms: list[Uniform] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def instructions(self) -> Iterator[Instruction]:
        for block in self.blocks:
            yield from block.instructions

    def values(self) -> Iterator[Value]:
        for ins in self.instructions():
            if ins.dest is not None:
                yield ins.dest

    def block_named(self, name: str) -> Block:
        for block in self.blocks:
            if block.name == name:
                return block
        raise KeyError(name)

    def instruction_count(self) -> int:
        return sum(len(b.instructions) for b in self.blocks)


def clone_function(fn: Function) -> Function:
    """A deep copy with fresh Values, Blocks and Instructions (Uniforms are shared: they
    are the function's interface). Passes run on clones so the original stays intact."""
    blocks = {block: Block(block.name) for block in fn.blocks}
    values = {value: Value(value.name, value.size) for value in fn.values()}

    def operand(src: Operand) -> Operand:
        ref = src.ref
        if isinstance(ref, Value):
            ref = values.get(ref, ref)
        return Operand(ref, src.abs, src.neg)

    for block in fn.blocks:
        blocks[block].instructions = [
            Instruction(
                ins.opcode,
                values[ins.dest] if ins.dest is not None else None,
                [operand(src) for src in ins.srcs],
                dict(ins.attrs),
                [blocks.get(target, target) for target in ins.blocks],
                ins.sat,
            )
            for ins in block.instructions
        ]
    return Function(fn.name, list(fn.uniforms), [blocks[b] for b in fn.blocks])
