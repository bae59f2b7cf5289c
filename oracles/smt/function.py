"""Encoding a whole loop-free function, for one symbolic thread, as z3 terms.

`encode_function(fn, thread_id=..., uniforms=..., memory=...)` walks the reachable blocks in
reverse postorder (a topological order, since a loop-free CFG is a DAG; a function with a
back edge raises `NotLoopFree`) and gives each block a path condition: the entry's is True,
an edge's is its source block's AND the branch condition (or its negation, for the second
target), a block's is the OR of its incoming edges'. Every instruction's semantics come from
`encode_instruction` (so from `Z3BitVectors`, the one z3 implementation of the opcode table);
this module only threads its results through the control flow:

* a phi is an If-chain over its incoming edges' conditions (at most one holds);
* memory is one byte array threaded through every store, each guarded by its block's path
  condition: `If(pc, Store(...), mem)`; loads read the array as it is at that point;
* undefined behaviour is the OR, over instructions, of (path condition AND the
  instruction's undefined condition);
* exports: per slot, a "written" Bool and the 64-bit value written last along the path
  (RPO visits the blocks of any path in path order, so guarded overwrites in RPO order give
  the last write).

Values computed in blocks off the path are junk, but everything observable (memory,
exports, undefined behaviour) is guarded by path conditions, so junk never leaks.

Only one thread is modelled; cross-thread effects (data races) are the interpreter's.

`InstructionMemo` (optional, `memo=`) keeps instruction encodings across functions, for
callers that encode many similar ones (the promotion invariant: a step's BEFORE and AFTER).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import z3

from agxir.cfg import CFG
from agxir.ir import Block, Function, Immediate, Instruction, Uniform, Value
from agxir.text import format_instruction
from oracles.smt.bitvectors import Memory, function_memory, uniform_terms
from oracles.smt.instruction import encode_instruction

__all__ = [
    "EncodedFunction",
    "Export",
    "NotLoopFree",
    "buffer_contents",
    "encode_function",
    "evaluate",
    "is_loop_free",
    "loop_header",
    "thread_bound",
]

EXPORT_WIDTH = 64  # exports are compared as the interpreter stores them: zero-extended


class NotLoopFree(ValueError):
    """The function has a cycle reachable from its entry; `block` names a loop header."""

    def __init__(self, fn: Function, block: Block):
        self.function = fn
        self.block = block
        super().__init__(f"@{fn.name} has a loop at block {block.name}")


@dataclass(frozen=True)
class Export:
    """One output slot of the thread: whether some export on the path wrote it, and the
    last value written (zero-extended to 64 bits; meaningless when not written)."""

    written: z3.BoolRef
    value: z3.BitVecRef


@dataclass(frozen=True)
class EncodedFunction:
    """What a loop-free function does in one thread, as z3 terms.

    `undefined`: the thread's undefined behaviour condition; `reasons`: (reason, block name,
    condition) for each instruction that can be undefined, already guarded by its path
    condition, in RPO order; `memory`: memory at the end; `exports`: slot -> `Export`;
    `path`: each reachable block's path condition; `values`: each value's term (phis
    included; values of unreachable blocks absent); `thread_id`: the 32-bit thread id term.
    """

    undefined: z3.BoolRef
    memory: Memory
    exports: dict[int, Export]
    path: dict[Block, z3.BoolRef]
    values: dict[Value | Uniform, z3.ExprRef] = field(repr=False)
    reasons: tuple[tuple[str, str, z3.BoolRef], ...] = ()
    thread_id: z3.BitVecRef | None = None


def loop_header(fn: Function) -> Block | None:
    """The target of the first back edge of a DFS from the entry, or None if loop-free."""
    cfg = CFG(fn)
    return cfg.back_edges[0][1] if cfg.back_edges else None


def is_loop_free(fn: Function) -> bool:
    """No cycle is reachable from the entry (unreachable cycles never run)."""
    return loop_header(fn) is None


def thread_bound(thread_id: z3.BitVecRef, threads: int) -> z3.BoolRef:
    """The thread id is one of 0 .. threads-1."""
    if threads < 1:
        raise ValueError("at least one thread is needed")
    if threads >= 1 << 32:
        return z3.BoolVal(True)
    return z3.ULT(thread_id, z3.BitVecVal(threads, 32))


def _or(terms: list[z3.BoolRef]) -> z3.BoolRef:
    if not terms:
        return z3.BoolVal(False)
    return terms[0] if len(terms) == 1 else z3.Or(*terms)


def _and(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    if z3.is_true(a):
        return b
    if z3.is_true(b):
        return a
    return z3.And(a, b)


def _guarded(pc: z3.BoolRef, then: z3.ExprRef, otherwise: z3.ExprRef) -> z3.ExprRef:
    return then if z3.is_true(pc) else z3.If(pc, then, otherwise)


class _Encoder:
    def __init__(
        self,
        fn: Function,
        thread_id: z3.BitVecRef,
        uniforms: Mapping[Uniform, z3.BitVecRef],
        memory: Memory,
        memo: InstructionMemo | None = None,
    ):
        self.memo = memo
        self.fn = fn
        self.cfg = CFG(fn)
        if self.cfg.back_edges:
            raise NotLoopFree(fn, self.cfg.back_edges[0][1])
        self.tid = thread_id
        self.values: dict[Value | Uniform, z3.ExprRef] = dict(uniforms)
        self.memory = memory
        self.path: dict[Block, z3.BoolRef] = {}
        # (source, target) -> condition that control flows along that edge
        self.edges: dict[tuple[Block, Block], z3.BoolRef] = {}
        self.reasons: list[tuple[str, str, z3.BoolRef]] = []
        self.undefined: list[z3.BoolRef] = []
        self.exports: dict[int, Export] = {}

    def run(self) -> EncodedFunction:
        for block in self.cfg.rpo:
            self.block(block)
        return EncodedFunction(
            undefined=_or(self.undefined),
            memory=self.memory,
            exports=dict(self.exports),
            path=dict(self.path),
            values=self.values,
            reasons=tuple(self.reasons),
            thread_id=self.tid,
        )

    def block(self, block: Block) -> None:
        if block is self.cfg.entry:
            pc = z3.BoolVal(True)
        else:
            incoming = [self.edges.get((pred, block)) for pred in self.cfg.preds[block]]
            pc = _or([edge for edge in incoming if edge is not None])
        self.path[block] = pc
        for ins in block.instructions:
            if ins.is_phi:
                self.phi(block, ins)
                continue
            if self.memo is None:
                encoded = encode_instruction(ins, self.values, self.tid, self.memory)
            else:
                encoded = self.memo.encoded(ins, self.values, self.tid, self.memory)
            for reason, cond in encoded.reasons:
                if z3.is_false(cond):
                    continue
                guarded = _and(pc, cond)
                self.reasons.append((reason, block.name, guarded))
                self.undefined.append(guarded)
            if encoded.memory_after is not None and encoded.memory_after is not self.memory:
                array = _guarded(pc, encoded.memory_after.array, self.memory.array)
                self.memory = self.memory.with_array(array)
            for slot, value in encoded.exports.items():
                self.export(pc, slot, value)
            if ins.is_terminator:
                self.terminator(block, pc, ins, encoded.result)
            elif ins.dest is not None:
                self.values[ins.dest] = encoded.result

    def phi(self, block: Block, ins: Instruction) -> None:
        size = ins.dest.size
        choices: list[tuple[z3.BoolRef, z3.BitVecRef]] = []
        for src, pred in zip(ins.srcs, ins.blocks, strict=True):
            edge = self.edges.get((pred, block))
            if edge is None:  # the edge cannot run (unreachable predecessor)
                continue
            ref = src.ref
            if isinstance(ref, Immediate):
                term = z3.BitVecVal(ref.bits & ((1 << size) - 1), size)
            else:
                term = self.values[ref]
            choices.append((edge, term))
        if not choices:  # the block itself cannot run
            self.values[ins.dest] = z3.BitVecVal(0, size)
            return
        value = choices[-1][1]
        for edge, term in reversed(choices[:-1]):
            value = z3.If(edge, term, value)
        self.values[ins.dest] = value

    def terminator(self, block: Block, pc: z3.BoolRef, ins: Instruction, cond) -> None:
        targets = list(ins.blocks)
        if len(targets) == 1:
            self.edges[(block, targets[0])] = pc
        elif len(targets) == 2:
            if targets[0] is targets[1]:
                self.edges[(block, targets[0])] = pc
            else:
                self.edges[(block, targets[0])] = _and(pc, cond)
                self.edges[(block, targets[1])] = _and(pc, z3.Not(cond))
        elif targets:
            raise ValueError(f"{ins.name} has {len(targets)} targets")

    def export(self, pc: z3.BoolRef, slot: int, value: z3.BitVecRef) -> None:
        if value.size() < EXPORT_WIDTH:
            value = z3.ZeroExt(EXPORT_WIDTH - value.size(), value)
        previous = self.exports.get(slot)
        if previous is None:
            previous = Export(z3.BoolVal(False), z3.BitVecVal(0, EXPORT_WIDTH))
        if z3.is_true(pc):
            written = pc
        elif z3.is_false(previous.written):
            written = pc
        else:
            written = z3.Or(pc, previous.written)
        self.exports[slot] = Export(written, _guarded(pc, value, previous.value))


def encode_function(
    fn: Function,
    *,
    thread_id: z3.BitVecRef | int | None = None,
    uniforms: Mapping[Uniform, z3.BitVecRef] | None = None,
    memory: Memory | None = None,
    memo: InstructionMemo | None = None,
) -> EncodedFunction:
    """Encode loop-free `fn` for one thread (raises `NotLoopFree` otherwise).

    `thread_id`: a 32-bit term or int (default: a fresh constant "thread_id"; bound it with
    `thread_bound`). `uniforms`: a term per uniform (default `uniform_terms(fn)`: buffers at
    the interpreter's addresses, scalars fresh constants). `memory`: the initial memory
    (default `function_memory(fn)`: a fresh array with fn's buffers). The function is
    assumed to verify.
    """
    if thread_id is None:
        thread_id = z3.BitVec("thread_id", 32)
    elif isinstance(thread_id, int):
        thread_id = z3.BitVecVal(thread_id, 32)
    if uniforms is None:
        uniforms = uniform_terms(fn)
    if memory is None:
        memory = function_memory(fn)
    return _Encoder(fn, thread_id, uniforms, memory, memo).run()


class InstructionMemo:
    """Instruction encodings kept across functions: a step's AFTER is mostly its BEFORE,
    and z3 terms are hash-consed, so an instruction whose text, attribute types, operand
    terms, memory and thread id are those of one encoded before encodes to the same terms.
    The key holds term ids; the entry holds the terms, so no id is reused while it lives."""

    def __init__(self, limit: int = 20000):
        self.limit = limit
        self.entries: dict[tuple, tuple] = {}
        self.hits = self.misses = 0

    def key(self, ins: Instruction, values, tid, memory: Memory) -> tuple[tuple, list]:
        """The memo's key for `ins` read over `values`, and the operand terms it names."""
        terms = [values[src.ref] for src in ins.srcs if type(src.ref) is not Immediate]
        key = (format_instruction(ins), tuple(type(v) for v in ins.attrs.values()),
               tuple(term.get_id() for term in terms), memory.array.get_id(),
               memory.buffers, tid.get_id())
        return key, terms

    def encoded(self, ins: Instruction, values, tid, memory: Memory):
        """`encode_instruction(ins, values, tid, memory)`, from the memo when it has it."""
        key, terms = self.key(ins, values, tid, memory)
        entry = self.entries.get(key)
        if entry is not None:
            self.hits += 1
            encoded, _, then_memory, _ = entry
            if encoded.memory_after is then_memory:
                # Stored nothing: the encoder tells that by identity with its own memory.
                return replace(encoded, memory_after=memory)
            return encoded
        self.misses += 1
        encoded = encode_instruction(ins, values, tid, memory)
        if len(self.entries) >= self.limit:
            self.entries.clear()
        self.entries[key] = (encoded, terms, memory, tid)
        return encoded


# --- reading values back ------------------------------------------------------------------------


def evaluate(terms, model: z3.ModelRef | None = None) -> list[int | bool]:
    """The values of `terms` in `model` (ints for bit-vectors, bools for Bools; constants the
    model leaves open take any value). Without a model the terms must be closed; they are
    then evaluated in one empty model, much faster than simplifying each."""
    if model is None:
        solver = z3.Solver()
        solver.check()
        model = solver.model()
    values: list[int | bool] = []
    for term in terms:
        value = model.eval(term, model_completion=True)
        values.append(value.as_long() if z3.is_bv_value(value) else z3.is_true(value))
    return values


def buffer_contents(memory: Memory, number: int, model: z3.ModelRef | None = None) -> bytes:
    """The bytes of buffer `number` of `memory` (as `evaluate` reads terms)."""
    parts = memory.buffer_bytes(number)
    data = bytearray()
    # In chunks: z3 hands big values over as decimal text, which Python caps at 4300 digits.
    for start in range(0, len(parts), 256):
        chunk = parts[start : start + 256]
        word = chunk[0] if len(chunk) == 1 else z3.Concat(*reversed(chunk))
        (value,) = evaluate([word], model)
        data += value.to_bytes(len(chunk), "little")
    return bytes(data)
