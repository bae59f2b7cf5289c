"""The IR data model: uniforms, values, registers, operands, instructions, blocks, functions.

One data model serves every level of a function (`LEVELS`): SSA (values), exec (SSA values
under AGX exec-mask control flow), vreg (virtual registers, not SSA) and machine (physical
16-bit halves). A register is just another operand kind. This module owns only the shape of
a program. What an opcode means, which operands and
attributes it takes, and how it prints all come from the opcode table (`agxir.opcodes`).
Values are compared by identity; a function's structural equality is its printed text.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agxir.native import CORE

if TYPE_CHECKING:
    from agxir.opcodes.spec import Opcode

SIZES = (16, 32, 64)



class Level:
    """A level of the pipeline: its name, its place in `LEVELS` and the levels a lowering
    pass may take a function of this level to.

    The level's syntax, opcode table and verifier live in its module under `agxir.levels`
    (found through `agxir.levels.hooks`). A level compares equal to, hashes like, prints and
    formats as its name, so `fn.level == "machine"` holds; it pickles by name and unpickles
    as the one object of that name.
    """

    __slots__ = ("name", "order", "lowers_to")

    def __init__(self, name: str, order: int, lowers_to: tuple[str, ...]) -> None:
        self.name = name
        self.order = order
        self.lowers_to = lowers_to

    def may_lower_to(self, other: Level | str) -> bool:
        return level_named(other).name in self.lowers_to

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Level):
            return self is other
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    def __repr__(self) -> str:
        return f"<level {self.name}>"

    def __reduce__(self) -> tuple:
        return level_named, (self.name,)


# The levels of a function, in pipeline order. `ssa` is the generator's and the SSA passes';
# `exec` keeps SSA values and phis under exec-mask control flow (after control-flow
# lowering); `vreg` has virtual registers and parallel copies instead of phis (after
# out-of-SSA); `machine` has physical registers (after register allocation, from exec by
# Mesa's SSA-based allocator or from vreg by the vreg allocator).
SSA = Level("ssa", 0, ("exec",))
EXEC = Level("exec", 1, ("vreg", "machine"))
VREG = Level("vreg", 2, ("machine",))
MACHINE = Level("machine", 3, ())
LEVELS = (SSA, EXEC, VREG, MACHINE)
_BY_NAME = {level.name: level for level in LEVELS}


def level_named(name: Level | str) -> Level:
    """The level called `name` (a Level is returned as it is); ValueError for no level."""
    if type(name) is Level:
        return name
    found = _BY_NAME.get(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"no IR level {name!r} (the levels are {', '.join(_BY_NAME)})")
    return found


class _LevelField:
    """`Function.level`: whatever is assigned (a Level or its name) is held as the Level."""

    def __get__(self, fn: Function | None, owner: type | None = None) -> Level:
        if fn is None:
            return SSA  # the dataclass default
        return fn.__dict__["level"]

    def __set__(self, fn: Function, value: Level | str) -> None:
        fn.__dict__["level"] = level_named(value)

NUM_HALVES = 256  # AGX_NUM_REGS: 16-bit halves r0l..r127h


@dataclass(frozen=True)
class Register:
    """A physical register: `size` bits starting at 16-bit half `half`.

    Registers compare by value: two operands naming the same halves are the same storage.
    Naturally aligned registers are spelled as AGX does (`r0l`, `r0h`, `r3`, `d2` for the
    64-bit `r2:r3`); a misaligned one (only a wrong pass makes it) as `h<half>:<size>`.
    """

    half: int
    size: int

    @property
    def halves(self) -> range:
        return range(self.half, self.half + self.size // 16)

    @property
    def aligned(self) -> bool:
        return self.half % (self.size // 16) == 0

    @property
    def name(self) -> str:
        key = (self.half, self.size)
        name = _REGISTER_NAMES.get(key)
        if name is None:
            name = self.spelling()
            if len(_REGISTER_NAMES) < 1 << 12:
                _REGISTER_NAMES[key] = name
        return name

    def spelling(self) -> str:
        if not self.aligned or self.size not in SIZES:
            return f"h{self.half}:{self.size}"
        if self.size == 16:
            return f"r{self.half // 2}{'lh'[self.half % 2]}"
        if self.size == 32:
            return f"r{self.half // 2}"
        return f"d{self.half // 2}"

    def overlaps(self, other: Register) -> bool:
        return self.half < other.half + other.size // 16 and other.half < self.half + self.size // 16

    def __repr__(self) -> str:
        return self.name


# (half, size) -> name: printing and the register passes ask for names by the million
_REGISTER_NAMES: dict[tuple[int, int], str] = {}
R0L = Register(0, 16)  # the exec-mask nesting counter


@dataclass(frozen=True)
class VirtualRegister:
    """A virtual register of the vreg level: unlimited, not SSA (may be written many times)."""

    index: int
    size: int

    @property
    def name(self) -> str:
        return f"v{self.index}"

    def __repr__(self) -> str:
        return f"v{self.index}:{self.size}"


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
    """A source: an SSA value, a register, a uniform or an immediate, with AGX source
    modifiers."""

    ref: Value | Register | VirtualRegister | Uniform | Immediate
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

    @property
    def register(self) -> Register | VirtualRegister | None:
        return self.ref if isinstance(self.ref, Register | VirtualRegister) else None

    def with_ref(self, ref: Value | Register | VirtualRegister | Uniform | Immediate) -> Operand:
        return Operand(ref, self.abs, self.neg)


@dataclass(eq=False)
class Instruction:
    """One operation. `blocks` holds branch targets for terminators and the incoming
    block of each source for phis; `attrs` holds the immediates the opcode declares.
    `dests` holds the destinations of a multi-destination op (`parallel_copy`), whose
    `dest` is None: destination i receives source i, all sources read before any write."""

    opcode: Opcode
    dest: Value | Register | VirtualRegister | None
    srcs: list[Operand]
    attrs: dict[str, int | str] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    sat: bool = False
    dests: list[Value | Register | VirtualRegister] = field(default_factory=list)

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

    def defs(self) -> list[Value | Register | VirtualRegister]:
        """Everything written: the destination, or the destinations of a parallel copy."""
        if self.dest is not None:
            return [self.dest]
        return list(self.dests)

    def __repr__(self) -> str:
        return f"<{self.dest!r} = {self.opcode.name} ...>"


@dataclass(eq=False)
class Block:
    """A basic block. At the SSA level its successors are its terminator's targets; at the
    exec, vreg and machine levels control is the wave's (exec mask, one program counter,
    fallthrough in layout order) and `logical_successors` records the per-lane CFG that
    phis, liveness and register allocation reason about (`b1: -> b2, b3` in the text)."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    logical_successors: list[Block] | None = None

    @property
    def terminator(self) -> Instruction | None:
        if self.instructions and self.instructions[-1].is_terminator:
            return self.instructions[-1]
        return None

    @property
    def successors(self) -> list[Block]:
        if self.logical_successors is not None:
            return list(self.logical_successors)
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
    level: Level = _LevelField()  # type: ignore[assignment]
    # Figures a pass records about the function at the machine level (the register
    # allocator's `demand` and `bound`, in halves); printed in the header as `name=N`.
    notes: dict[str, int] = field(default_factory=dict)

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def instructions(self) -> Iterator[Instruction]:
        for block in self.blocks:
            yield from block.instructions

    def values(self) -> Iterator[Value]:
        for ins in self.instructions():
            if isinstance(ins.dest, Value):
                yield ins.dest

    def block_named(self, name: str) -> Block:
        for block in self.blocks:
            if block.name == name:
                return block
        raise KeyError(name)

    def instruction_count(self) -> int:
        return sum(len(b.instructions) for b in self.blocks)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a while (as it was again afterwards).

    For the code that builds or copies a whole function: it makes hundreds of thousands of
    small objects for a long one and no garbage cycles, so the collector's passes over a
    growing heap are pure cost there (measured: three quarters of cloning a 20,000-line
    SSA function in a process that holds a few such functions, half of parsing a
    100,000-line one). What is made meanwhile is collected as usual afterwards.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def clone_function(fn: Function) -> Function:
    """A deep copy with fresh Values, Blocks and Instructions (Uniforms are shared: they
    are the function's interface; registers, immediates and operands that name no Value
    are immutable and shared too). Passes run on clones so the original stays intact.

    The compiled core (agxir.native) makes it when it is built, `clone_reference`
    otherwise: the same objects either way."""
    with collector_paused():
        if CORE is not None:
            return CORE.clone(fn)
        return _clone(fn)


def _clone(fn: Function) -> Function:
    """The reference clone (`clone_reference`), which agxir/ccore_src/clone.c follows object
    for object."""
    # Values, Operands and Instructions are made as their dataclass constructors make them
    # (the same attributes in the same order) but without a call through the class: a
    # clone makes one per definition, use and instruction, and the calls were half its time.
    new = object.__new__
    blocks = {block: Block(block.name) for block in fn.blocks}
    values = {}
    for block in fn.blocks:
        for ins in block.instructions:
            value = ins.dest
            if isinstance(value, Value):
                made = values[value] = new(Value)
                made.name = value.name
                made.size = value.size
    set_field = object.__setattr__  # (Operand is frozen: past its __setattr__, as __init__ does)

    def storage(dest):
        return values.get(dest, dest) if isinstance(dest, Value) else dest

    for block in fn.blocks:
        cloned = []
        append = cloned.append
        for ins in block.instructions:
            srcs = []
            for src in ins.srcs:
                ref = src.ref
                if isinstance(ref, Value):
                    op = new(Operand)
                    set_field(op, "ref", values.get(ref, ref))
                    set_field(op, "abs", src.abs)
                    set_field(op, "neg", src.neg)
                    srcs.append(op)
                elif type(src) is Operand:
                    srcs.append(src)
                else:
                    srcs.append(Operand(ref, src.abs, src.neg))
            dest = ins.dest
            made = new(Instruction)
            made.opcode = ins.opcode
            made.dest = values.get(dest, dest) if isinstance(dest, Value) else dest
            made.srcs = srcs
            made.attrs = ins.attrs.copy()
            made.blocks = [blocks.get(target, target) for target in ins.blocks] if ins.blocks else []
            made.sat = ins.sat
            made.dests = [storage(dest) for dest in ins.dests] if ins.dests else []
            append(made)
        blocks[block].instructions = cloned
        if block.logical_successors is not None:
            blocks[block].logical_successors = [
                blocks.get(succ, succ) for succ in block.logical_successors
            ]
    return Function(
        fn.name, list(fn.uniforms), [blocks[b] for b in fn.blocks], fn.level, dict(fn.notes)
    )


clone_reference = _clone  # public for the agreement tests and for measuring the two apart
if CORE is not None:
    CORE.bind(Value, Operand, Instruction, Block, Function, Uniform, Immediate, Register,
              VirtualRegister)
