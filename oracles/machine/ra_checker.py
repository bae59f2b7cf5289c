"""The register-allocation checker: does every read find the value the program meant?

In the style of regalloc2's checker, and independent of the interpreter: an abstract
interpretation over the allocated program that maps each 16-bit half to the set of
(value, piece) pairs it may hold, meeting at joins by intersection over the logical CFG to
a fixpoint. The allocated program is aligned with its reference (the exec-level program
the allocator was given) instruction by instruction: an allocated instruction is either the
counterpart of the next reference instruction (same opcode, attributes, immediates and
uniforms, a register where the reference has a value) or an inserted `parallel_copy`;
register phis stand for the reference's phis. Every read of a value must find each of its
pieces in the halves of the register read; every violation is reported with the block,
the instruction, the register, the value expected and what the register may hold: a
structured error (an `RAErrorKind` and fields), whose `str` is the message, so a caller
(the fuzzer's signatures) reads the fields, never the text.

Transfer rules: a definition of v into R leaves R's halves holding exactly v's pieces (and,
for a virtual register, removes its older copies everywhere: it may be written many times;
an SSA value is redefined only around a loop, and the loop header's meet with its entry
edge already drops the old copies); a `parallel_copy` moves the sets in parallel (an
immediate or uniform leaves nothing the program defined); the exec-mask rows (`if_icmp`,
`pop_exec`, `break`, ...) write r0l, so a value left there is lost. At a block with
register phis, the edge from P makes the phi's register hold the phi's value iff P's
out-state has the phi's source in the phi's source register (a missing source is reported
as a read at the phi). An allocated program that does not align with its input is one
`AlignmentError`, not a crash.

This catches a wrong allocation whatever the inputs: two values that happen to be equal
on every input set still differ here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from agxir.ir import (
    R0L,
    Block,
    Function,
    Instruction,
    Operand,
    Register,
    Uniform,
    Value,
    VirtualRegister,
)
from agxir.machine.opcodes import EXEC_UPDATES
from agxir.text import format_instruction
from oracles.machine.copy_checker import is_identity_move, plain_move_source

Meant = (Value, VirtualRegister)  # what a reference program's operand may mean



class RAErrorKind(Enum):
    """What went wrong, one member per message the checker writes."""

    WRONG_VALUE = "wrong-value"  # a read may not find (a piece of) the value it means
    BLOCKS_DIFFER = "blocks-differ"  # the allocated program's blocks are not its input's
    UNEXPECTED_INSTRUCTION = "unexpected-instruction"  # one where the input has another
    MISSING_INSTRUCTION = "missing-instruction"  # an input instruction with no counterpart


@dataclass(frozen=True)
class Meaning:
    """A piece of what the program defined, as a half may hold it: an SSA value (`%a`) or a
    vreg named with its width (`v7:16`: a narrow write is not `v7:32`), and which 16-bit
    piece of it (0: the low half; written `[k]` after the name when not 0)."""

    name: str
    vreg_size: int | None  # None: an SSA value
    piece: int = 0

    def __str__(self) -> str:
        base = f"%{self.name}" if self.vreg_size is None else f"{self.name}:{self.vreg_size}"
        return base + (f"[{self.piece}]" if self.piece else "")


@dataclass(frozen=True)
class RAError:
    """A read that may not find the value it means: in `block`, the allocated instruction
    at `index` (its text `instruction`, a phi when the read is of a phi's source on an edge)
    reads `register`, whose 16-bit half `half` should hold `value` but may hold any of
    `held` (empty: nothing the program defined)."""

    block: str
    index: int
    instruction: str
    register: str
    half: int
    value: Meaning
    held: tuple[Meaning, ...]  # sorted by their text, as the message lists them

    kind: ClassVar[RAErrorKind] = RAErrorKind.WRONG_VALUE

    @property
    def expected(self) -> str:
        return str(self.value)

    @property
    def holds(self) -> str:
        return ", ".join(map(str, self.held)) if self.held else "nothing the program defined"

    def __str__(self) -> str:
        return (
            f"in {self.block}, `{self.instruction}`: {self.register} should hold "
            f"{self.expected} but may hold {self.holds}"
        )


@dataclass(frozen=True)
class AlignmentError:
    """The allocated program is not its input with registers and parallel copies: its
    blocks differ (`block` empty), or in `block` the allocated instruction at `index`
    (`instruction`) stands where the input has `expected` (None: nothing), or the input's
    instruction at `index` (`expected`) is missing (`instruction` None)."""

    kind: RAErrorKind
    block: str = ""
    index: int | None = None
    instruction: str | None = None  # the allocated instruction, as text
    expected: str | None = None  # the input's instruction, as text

    def __str__(self) -> str:
        if self.kind is RAErrorKind.BLOCKS_DIFFER:
            return "the allocated program's blocks differ from its input's"
        if self.kind is RAErrorKind.MISSING_INSTRUCTION:
            return f"in {self.block}, `{self.expected}` is missing"
        return (f"in {self.block}, `{self.instruction}` stands where the input has "
                f"`{self.expected if self.expected is not None else 'nothing'}`")

    @property
    def message(self) -> str:
        return str(self)


class Misaligned(Exception):
    def __init__(self, error: AlignmentError) -> None:
        super().__init__(str(error))
        self.error = error


def _meaning(value, piece: int = 0) -> Meaning:
    # A vreg is named with its width: v7:16 (a narrow write) is not v7:32.
    if isinstance(value, Value):
        return Meaning(value.name, None, piece)
    return Meaning(value.name, value.size, piece)


def _position(block: Block, ins: Instruction) -> int:
    return next(k for k, other in enumerate(block.instructions) if other is ins)


def _same_operand(reference: Operand, allocated: Operand) -> bool:
    if reference.abs != allocated.abs or reference.neg != allocated.neg:
        return False
    if isinstance(reference.ref, Meant):
        return isinstance(allocated.ref, Register) and allocated.ref.size == reference.ref.size
    if isinstance(reference.ref, Uniform):  # the same interface, whichever object holds it
        return isinstance(allocated.ref, Uniform) and allocated.ref.name == reference.ref.name
    return reference.ref == allocated.ref


def _counterpart(reference: Instruction, allocated: Instruction) -> bool:
    if reference.opcode is not allocated.opcode and reference.name != allocated.name:
        return False
    if reference.sat != allocated.sat or reference.attrs != allocated.attrs:
        return False
    srcs = reference.srcs
    if len(srcs) != len(allocated.srcs):
        return False
    if reference.blocks or allocated.blocks:
        if [b.name for b in reference.blocks] != [b.name for b in allocated.blocks]:
            return False
    for r, a in zip(srcs, allocated.srcs):
        if not _same_operand(r, a):
            return False
    meant_defs, got_defs = reference.defs(), allocated.defs()
    if len(meant_defs) != len(got_defs):
        return False
    for meant, got in zip(meant_defs, got_defs):
        if isinstance(meant, Meant):
            if not (isinstance(got, Register) and got.size == meant.size):
                return False
        elif meant != got:
            return False
    return True


def _plain_copy(reference: Instruction) -> Value | None:
    """The value `%d = mov %s` copies (no modifier, no saturation, the same size), else None."""
    source = plain_move_source(reference)
    if isinstance(source, Value) and isinstance(reference.dest, Value) \
            and source.size == reference.dest.size:
        return source
    return None


EMPTY: frozenset = frozenset()


SLOTS = 1 << 16  # codes per meant value: more pieces than a register has halves


class _Checker:
    """The analysis over codes, not (value, piece) pairs: each meant value (a Value, or a
    vreg, equal vregs being one) is numbered once, and piece k of value n is the int
    n * SLOTS + k, so the states' sets hash and compare as ints. Each block's aligned
    instructions are also compiled once (`_compile`) into the steps `transfer` replays on
    every round of the fixpoint: which halves to read for which code, which to define."""

    def __init__(self, reference: Function, allocated: Function) -> None:
        self.reference = reference
        self.allocated = allocated
        if [b.name for b in reference.blocks] != [b.name for b in allocated.blocks]:
            raise Misaligned(AlignmentError(RAErrorKind.BLOCKS_DIFFER))
        self.pairs = dict(zip(allocated.blocks, reference.blocks, strict=True))
        self.alignment = {block: self.align(block) for block in allocated.blocks}
        self.preds: dict[Block, list[Block]] = {b: [] for b in allocated.blocks}
        for block in allocated.blocks:
            for succ in block.successors:
                self.preds[succ].append(block)
        self.errors: list[RAError] = []
        self.numbers: dict = {}  # meant value -> its number
        self.meant: list = []  # number -> the meant value
        self.pieces: list[int] = []  # number -> how many pieces of it a state may hold
        self.steps = {block: self._compile(block) for block in allocated.blocks}
        self.phis = {block: self._compile_phis(block) for block in allocated.blocks}
        # Per number, every code of it a state may hold (what a vreg's redefinition drops).
        self.stale = {n: frozenset(range(n * SLOTS, n * SLOTS + self.pieces[n]))
                      for n, value in enumerate(self.meant) if isinstance(value, VirtualRegister)}

    def align(self, block: Block) -> list[tuple[Instruction, Instruction | None]]:
        reference = [ins for ins in self.pairs[block].instructions]
        aligned: list[tuple[Instruction, Instruction | None]] = []
        index = 0
        for position, ins in enumerate(block.instructions):
            if index < len(reference) and _counterpart(reference[index], ins):
                aligned.append((ins, reference[index]))
                index += 1
            elif ins.name == "parallel_copy":
                aligned.append((ins, None))
            else:
                expected = format_instruction(reference[index]) if index < len(reference) else None
                raise Misaligned(AlignmentError(
                    RAErrorKind.UNEXPECTED_INSTRUCTION, block.name, position,
                    format_instruction(ins), expected))
        if index != len(reference):
            raise Misaligned(AlignmentError(
                RAErrorKind.MISSING_INSTRUCTION, block.name, index, None,
                format_instruction(reference[index])))
        return aligned

    # --- codes --------------------------------------------------------------------------------
    def _number(self, value, pieces: int = 0) -> int:
        number = self.numbers.get(value)
        if number is None:
            number = self.numbers[value] = len(self.meant)
            self.meant.append(value)
            self.pieces.append(0)
        if pieces > self.pieces[number]:
            self.pieces[number] = pieces
        return number

    def _writes(self, register: Register, value) -> tuple:
        """(half, what it holds after) per half of `register` when `value` (None: nothing
        the program defined) is defined into it, and the number of a vreg whose older
        copies go stale (None for anything else)."""
        half, count = register.half, register.size // 16
        if value is None:
            return tuple((half + piece, EMPTY) for piece in range(count)), None
        number = self._number(value, count)
        base = number * SLOTS
        if count == 2:  # the common case, without a generator
            writes = ((half, frozenset((base,))), (half + 1, frozenset((base + 1,))))
        else:
            writes = tuple((half + piece, frozenset((base + piece,))) for piece in range(count))
        return writes, (number if isinstance(value, VirtualRegister) else None)

    def _reads(self, ins: Instruction, reference: Instruction) -> tuple:
        reads = []
        for src, meant in zip(ins.srcs, reference.srcs, strict=True):
            if isinstance(meant.ref, Meant):
                register = src.ref
                reads.append((self._number(meant.ref) * SLOTS, register.half,
                              register.size // 16, meant.ref, register))
        return tuple(reads)

    def _compile(self, block: Block) -> list[tuple]:
        """The block's aligned instructions as steps: ("move", [(half, source half or None)])
        for an inserted parallel copy, ("alias", source number, destination number) for an
        identity move, ("define", ins, reads, [writes...], exec) for the rest (`transfer`)."""
        steps: list[tuple] = []
        for ins, reference in self.alignment[block]:
            if ins.is_phi:
                continue
            if reference is None:
                moves = []
                for dest, src in zip(ins.dests, ins.srcs, strict=True):
                    for piece, half in enumerate(dest.halves):
                        if isinstance(src.ref, Register):
                            moves.append((half, src.ref.half + piece))
                        else:
                            moves.append((half, None))
                steps.append(("move", tuple(moves)))
                continue
            copied = _plain_copy(reference)
            if copied is not None and is_identity_move(ins):
                steps.append(("alias", self._number(copied), self._number(reference.dest)))
                continue
            reads = self._reads(ins, reference)
            writes = []
            if ins.name == "parallel_copy":  # the sources were read above, before any write
                for dest, meant in zip(ins.dests, reference.dests, strict=True):
                    writes.append(self._writes(dest, meant if isinstance(meant, Meant) else None))
                steps.append(("define", ins, reads, tuple(writes), False))
                continue
            for dest, meant in zip(ins.defs(), reference.defs(), strict=True):
                if isinstance(dest, Register):
                    writes.append(self._writes(dest, meant if isinstance(meant, Meant) else None))
            steps.append(("define", ins, reads, tuple(writes), ins.name in EXEC_UPDATES))
        return steps

    def _compile_phis(self, block: Block) -> list[tuple]:
        """Per phi: its instruction, the index of each predecessor among its blocks (the
        first, as `list.index`), its sources' reads and the halves its destination takes,
        holding its value or nothing."""
        phis = []
        for ins, reference in self.alignment[block]:
            if not ins.is_phi:
                break
            where: dict[Block, int] = {}
            for index, pred in enumerate(ins.blocks):
                where.setdefault(pred, index)
            reads = []
            for index, meant in enumerate(reference.srcs):
                if isinstance(meant.ref, Meant):
                    register = ins.srcs[index].ref
                    reads.append((self._number(meant.ref) * SLOTS, register.half,
                                  register.size // 16, meant.ref, register))
                else:
                    reads.append(None)
            arrived, _ = self._writes(ins.dest, reference.dest)
            lost = tuple((half, EMPTY) for half, _ in arrived)
            phis.append((ins, where, reads, arrived, lost))
        return phis

    # --- the abstract state -------------------------------------------------------------------
    def read(self, state: dict, block: Block, ins: Instruction, read: tuple) -> bool:
        """Whether the register of `read` holds its value in `state`; reported when it may
        not."""
        base, first, count, value, register = read
        for piece in range(count):
            code, half = base + piece, first + piece
            if code not in state.get(half, EMPTY):
                self.errors.append(RAError(
                    block.name, _position(block, ins), format_instruction(ins),
                    register.name, half, _meaning(value, code % SLOTS),
                    self._held(state.get(half, EMPTY)),
                ))
                return False
        return True

    def _held(self, codes: frozenset) -> tuple[Meaning, ...]:
        return tuple(sorted({_meaning(self.meant[c // SLOTS], c % SLOTS) for c in codes},
                            key=str))

    def transfer(self, block: Block, state: dict) -> dict:
        state = dict(state)
        read = self.read
        for step in self.steps[block]:
            kind = step[0]
            if kind == "define":
                _, ins, reads, writes, exec_update = step
                for one in reads:
                    read(state, block, ins, one)
                for halves, vreg in writes:
                    if vreg is not None:  # a vreg's older copies are stale now
                        stale = self.stale[vreg]
                        for half, pieces in state.items():
                            if not stale.isdisjoint(pieces):
                                state[half] = pieces - stale
                    for half, pieces in halves:
                        state[half] = pieces
                if exec_update:  # the exec-mask rows write the nesting counter
                    state[R0L.half] = EMPTY
            elif kind == "move":
                moved = {half: EMPTY if source is None else state.get(source, EMPTY)
                         for half, source in step[1]}
                state.update(moved)
            else:
                # `rX = mov rX` for `%d = mov %s`: no register changes, and %d is %s's value,
                # so every half holding a piece of %s holds that piece of %d too. Mesa leaves
                # such moves after coalescing and may shuffle the register away before one
                # (a phi's copy at the block's end), dropping them later; where rX does not
                # hold %s, %d is simply not in rX, and a later read of it there is reported.
                low = step[1] * SLOTS
                high, shift = low + SLOTS, (step[2] - step[1]) * SLOTS
                for half, pieces in list(state.items()):
                    added = [code + shift for code in pieces if low <= code < high]
                    if added:
                        state[half] = pieces.union(added)
        return state

    def entry(self, block: Block, outs: dict[Block, dict]) -> dict | None:
        incoming: list[dict] = []
        phis = self.phis[block]
        for pred in self.preds[block]:
            out = outs.get(pred)
            if out is None:
                continue
            edge = dict(out)
            updates: dict = {}
            for ins, where, reads, arrived, lost in phis:
                index = where.get(pred)
                if index is None:
                    continue
                arrives = True
                if reads[index] is not None:
                    arrives = self.read(out, block, ins, reads[index])
                for half, pieces in (arrived if arrives else lost):
                    updates[half] = pieces
            edge.update(updates)
            incoming.append(edge)
        if not incoming:
            return {} if block is self.allocated.entry else None
        if len(incoming) == 1:
            return incoming[0]
        halves = set().union(*incoming)
        return {h: frozenset.intersection(*(s.get(h, EMPTY) for s in incoming)) for h in halves}

    def run(self) -> list[RAError]:
        """Rounds over the blocks in layout order until no out-state changes. The last
        round saw every block from the fixpoint's states (none changed in it), so its
        errors are the fixpoint's: each round's replace the round before's, and no
        separate reporting pass is needed. (The states only shrink from round to round, so
        an earlier round's errors are among the last one's, and cost no more than them.)
        Without a backward edge in the layout one round is the fixpoint."""
        outs: dict[Block, dict] = {}
        blocks = self.allocated.blocks
        order = {block: k for k, block in enumerate(blocks)}
        # Every edge forward in the layout: each block's predecessors are final before it
        # is reached, so the first round is the fixpoint and a second would change nothing.
        forward = len(order) == len(blocks) and all(
            order[pred] < k for k, block in enumerate(blocks) for pred in self.preds[block])
        changed = True
        while changed:
            changed = False
            self.errors = []
            for block in blocks:
                state = self.entry(block, outs)
                if state is None:
                    continue
                out = self.transfer(block, state)
                if outs.get(block) != out:
                    outs[block] = out
                    changed = True
            if forward:
                break
        return self.errors


def check_allocation(
    reference: Function, allocated: Function
) -> list[RAError | AlignmentError]:
    """Every read of `allocated` (machine level, register phis and parallel copies allowed)
    that may not find the value `reference` (exec or vreg level) reads there; [] when none.
    An allocation that does not align with `reference` is one `AlignmentError`."""
    try:
        return _Checker(reference, allocated).run()
    except Misaligned as error:
        return [error.error]

