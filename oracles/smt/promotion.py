"""The address-promotion invariant: no overflow in promoted address math.

After the address passes (agxir/passes/address_*.py), 32-bit index math has been promoted
to 64 bits (`ulea`/`ilea`, 64-bit adds of extended values) or folded into a load/store's
address mode. That is exact only where the 32-bit math cannot wrap (amul/aadd promise it;
plain iadd/imul do not), so the invariant is: wherever BEFORE is defined, every memory
access of AFTER uses the address the matching access of BEFORE used, and AFTER adds no
undefined behaviour (an amul/aadd overflow, an access out of bounds or misaligned).

`promotion_failures(before, after, timeout_ms=...)` checks it with z3 for one symbolic
thread, for every input: both loop-free functions are encoded (`oracles.smt.function`) over
the same uniforms (matched by name; buffers at the interpreter's addresses, scalars one
shared symbolic value each), the same symbolic initial memory and the same thread id.

* Accesses are matched by position in program order (blocks in order, instructions in
  order): the address passes never reorder, add or remove memory instructions. Loads whose
  results nothing needs are left out on both sides first (what `dce` would remove), since
  DCE in the pipeline may drop them. A different number of accesses, or a load matched with
  a store or another format, is a failure.
* For access k (effective address as `agxir.opcodes.effects.effective_address` computes
  it, path condition from the encoding) z3 looks for an input with BEFORE defined where the
  access runs in one function and not the other, or runs in both at different addresses.
* One more query looks for an input with BEFORE defined and AFTER undefined, naming the
  reasons that hold in the model.

Each item that z3 refutes is a failure message with the model's thread id, scalars and the
two addresses; each that it cannot decide in `timeout_ms` is a failure "... unknown: reason"
(never silently passed). The ulea/ilea and promoted 64-bit values themselves have no
counterpart in BEFORE; what they compute is checked where it is used, at the accesses (a
lea read by anything else is the refinement oracle's business).

Functions with loops are out of scope: `promotion_failures` returns [] for them (the
encoding is for loop-free code; the interpreter oracles still run on them).

Cost (issue 23). Only the slice of each function the queries read is encoded
(`oracles.smt.promotion_slice`: the same terms as the whole encoding, for fewer
instructions); equal slices are proved without z3; all of a step's items are first asked
together, as one OR, of the solver for the queries' logic (QF_BV, or QF_ABV when a loaded
value is read), and only when that does not prove them all impossible is each item asked as
before. A proof is a proof whichever solver finds it; a refutation or an unknown always
comes from the general solver's per-item query, as it did. `reference=True` keeps the first
way (whole functions, one general query per item) to check the default way against.
Encoding, three quarters of this oracle's time in the default campaign (z3's Python API,
not its solver), goes through one `InstructionMemo` for the process: an AFTER slice shares
most instructions with its BEFORE, and about half of a campaign's instruction encodings
come from the memo, the same terms (tests/oracles/smt/test_function_memo.py).
"""

from __future__ import annotations

from collections import OrderedDict

import z3

from agxir.ir import Function, Instruction, clone_function
from agxir.opcodes.effects import effective_address
from agxir.text import format_instruction, print_function
from oracles.memory_model import buffer_base
from oracles.smt.bitvectors import Z3BitVectors, function_memory
from oracles.smt.function import (
    EncodedFunction,
    InstructionMemo,
    encode_function,
    evaluate,
    is_loop_free,
)
from oracles.smt.function import thread_bound as _thread_bound
from oracles.smt.limits import limit
from oracles.smt.promotion_slice import query_slice

__all__ = ["ACCESSES", "memory_accesses", "promotion_failures"]

ACCESSES = {"device_load": (0, 1), "device_store": (1, 2)}  # (base, index) positions
DEFAULT_TIMEOUT_MS = 2000


def _live(fn: Function) -> set[Instruction]:
    """The instructions `dce` keeps: side effects, terminators and what they transitively
    read (the same mark and sweep, without changing `fn`)."""
    defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
    worklist = [ins for ins in fn.instructions() if ins.opcode.side_effect or ins.is_terminator]
    live = set(worklist)
    while worklist:
        for value in worklist.pop().uses():
            definition = defs.get(value)
            if definition is not None and definition not in live:
                live.add(definition)
                worklist.append(definition)
    return live


def memory_accesses(fn: Function) -> list[tuple[str, Instruction]]:
    """(block name, instruction) of every device_load/device_store `dce` would keep, in
    program order."""
    live = _live(fn)
    return [
        (block.name, ins)
        for block in fn.blocks
        for ins in block.instructions
        if ins.name in ACCESSES and ins in live
    ]


def _uniform_terms(fn: Function, scalars: dict[str, z3.BitVecRef]) -> dict:
    terms, number = {}, 0
    for uniform in fn.uniforms:
        if uniform.is_buffer:
            terms[uniform] = z3.BitVecVal(buffer_base(number), 64)
            number += 1
        else:
            key = f"{uniform.name}:{uniform.size}"
            if key not in scalars:
                scalars[key] = z3.BitVec(f"uniform.{uniform.name}", uniform.size)
            terms[uniform] = scalars[key]
    return terms


def _address(encoded: EncodedFunction, ins: Instruction) -> z3.BitVecRef:
    machine = Z3BitVectors(encoded.values, encoded.thread_id, encoded.memory)
    machine.instruction = ins
    address, _ = effective_address(machine, ins, *ACCESSES[ins.name])
    return address


def _describe(ins: Instruction) -> str:
    return format_instruction(ins).strip()


class _Prover:
    def __init__(self, before: Function, after: Function, timeout_ms: int, threads: int | None,
                 texts: tuple[str, str] | None = None, logic: str | None = None):
        self.timeout_ms = timeout_ms
        self.logic = logic  # z3 logic of every query, to try its solver first; None: don't
        self.tid = z3.BitVec("thread_id", 32)
        self.scalars: dict[str, z3.BitVecRef] = {}
        memory = function_memory(before, name="initial_memory")
        text_b, text_a = texts or (print_function(before), print_function(after))
        self.before_fn, self.before = _encoded(before, text_b, self.tid, memory, self.scalars)
        self.after_fn, self.after = _encoded(after, text_a, self.tid, memory, self.scalars)
        self.assumptions = [z3.Not(self.before.undefined)]
        if threads is not None:
            self.assumptions.append(_thread_bound(self.tid, threads))

    def check(self, bad: z3.BoolRef) -> tuple[str, z3.ModelRef | None]:
        if self.logic is not None and self.proves_impossible(bad):
            return "proved", None
        solver = z3.Solver()
        limit(solver, self.timeout_ms)
        solver.add(*self.assumptions, bad)
        result = solver.check()
        if result == z3.unsat:
            return "proved", None
        if result == z3.sat:
            return "refuted", solver.model()
        return f"unknown: {solver.reason_unknown()}", None

    def proves_impossible(self, bad: z3.BoolRef) -> bool:
        """The query is unsatisfiable by z3's solver for `self.logic`, which needs about half
        the general solver's time on these queries. Anything else (sat, unknown, a term
        outside the logic) goes to the general solver as before, so a refutation's model,
        and so the message, and an unknown are what they always were."""
        solver = z3.SolverFor(self.logic)
        limit(solver, self.timeout_ms)
        solver.add(*self.assumptions, bad)
        try:
            return solver.check() == z3.unsat
        except z3.Z3Exception:
            return False

    def inputs(self, model: z3.ModelRef) -> str:
        names = sorted(self.scalars)
        values = evaluate([self.tid] + [self.scalars[n] for n in names], model)
        shown = [f"thread {values[0]}"] + [
            f"{n.split(':')[0]}={hex(v)}" for n, v in zip(names, values[1:])
        ]
        return ", ".join(shown)

    def access_query(self, k: int, site_b, site_a):
        """What access k asks: None (nothing: provably the same), a failure message found
        without the solver, or (bad, the terms a model is read at, what)."""
        (block_b, ins_b), (block_a, ins_a) = site_b, site_a
        pc_b = self.before.path.get(_block(self.before, block_b))
        pc_a = self.after.path.get(_block(self.after, block_a))
        what = f"access {k} ({_describe(ins_a)} in {block_a})"
        if pc_b is None and pc_a is None:
            return None  # unreachable in both
        if pc_b is None or pc_a is None:
            return f"{what}: reachable in only one of the functions"
        addr_b, addr_a = _address(self.before, ins_b), _address(self.after, ins_a)
        if pc_b.eq(pc_a) and addr_b.eq(addr_a):
            # The same term on both sides (z3 terms are hash-consed, and both encodings use
            # the same names for the thread id, memory and uniforms, so address math a step
            # left alone encodes to the same term): `bad` is then `x != x or (c and y != y)`,
            # false under any assumptions, which is what the solver would prove.
            return None
        bad = z3.Or(pc_b != pc_a, z3.And(pc_b, addr_b != addr_a))
        return bad, (pc_b, pc_a, addr_b, addr_a), what

    def undefined_query(self) -> z3.BoolRef | None:
        """What the undefinedness item asks, or None when it is provably nothing."""
        if z3.is_false(self.after.undefined) or self.after.undefined.eq(self.before.undefined):
            # The second: the query asks for AFTER's undefinedness under the assumption that
            # BEFORE's, the same term, is false; unsatisfiable, as the solver would prove.
            return None
        return self.after.undefined

    def access(self, k: int, site_b, site_a) -> str | None:
        query = self.access_query(k, site_b, site_a)
        if query is None or isinstance(query, str):
            return query
        bad, (pc_b, pc_a, addr_b, addr_a), what = query
        ins_b = site_b[1]
        verdict, model = self.check(bad)
        if verdict == "proved":
            return None
        if model is None:
            return f"{what}: {verdict}"
        runs_b, runs_a, ab, aa = evaluate([pc_b, pc_a, addr_b, addr_a], model)
        if runs_b != runs_a:
            return f"{what}: runs {'only before' if runs_b else 'only after'} ({self.inputs(model)})"
        return (f"{what}: address {hex(aa)} where BEFORE ({_describe(ins_b)}) used {hex(ab)} "
                f"({self.inputs(model)})")

    def undefined(self) -> str | None:
        bad = self.undefined_query()
        if bad is None:
            return None
        verdict, model = self.check(bad)
        if verdict == "proved":
            return None
        if model is None:
            return f"AFTER undefined where BEFORE is not: {verdict}"
        reasons = [f"{reason} in {block}" for reason, block, cond in self.after.reasons
                   if evaluate([cond], model)[0]]
        return (f"AFTER undefined where BEFORE is not: {', '.join(dict.fromkeys(reasons))} "
                f"({self.inputs(model)})")


# Encodings by (program text, memory layout). A pipeline's steps chain (one step's AFTER is
# the next one's BEFORE) and each address pass alone starts from the same program, so most
# functions are encoded more than once per program; encoding was 3/4 of this oracle's time
# (issue 10's profile). Every name the encoding uses (thread_id, initial_memory,
# uniform.NAME) is fixed, so an equal text gives equal terms.
_ENCODED: OrderedDict = OrderedDict()
_ENCODED_LIMIT = 64
_MEMO = InstructionMemo(limit=8000)  # about 40 MB of z3 terms when full (measured)


def _encoded(fn: Function, text: str, tid, memory, scalars) -> tuple[Function, EncodedFunction]:
    """A private clone of `fn` (the encoding keys values by object) and its encoding;
    `text` is `fn` printed."""
    key = (text, memory.buffers)
    hit = _ENCODED.get(key)
    if hit is not None:
        _ENCODED.move_to_end(key)
        _uniform_terms(hit[0], scalars)  # the same named terms, for reading models back
        return hit
    clone = clone_function(fn)
    hit = clone, encode_function(clone, thread_id=tid, memory=memory,
                                 uniforms=_uniform_terms(clone, scalars), memo=_MEMO)
    _ENCODED[key] = hit
    if len(_ENCODED) > _ENCODED_LIMIT:
        _ENCODED.popitem(last=False)
    return hit


def _block(encoded: EncodedFunction, name: str):
    for block in encoded.path:
        if block.name == name:
            return block
    return None


def promotion_failures(before_fn: Function, after_fn: Function, *,
                       timeout_ms: int = DEFAULT_TIMEOUT_MS, threads: int | None = None,
                       texts: tuple[str, str] | None = None, reference: bool = False) -> list[str]:
    """What breaks the invariant (see the module docstring), one message per access or
    undefined-behaviour item; [] when everything is proved, or when either function has a
    loop (out of scope). `threads`: bound the thread id below it (None: any thread id, which
    is sound because BEFORE's accesses are defined only in bounds). `texts`: both functions
    as printed, when the caller has them (the reference path reads them).

    By default only the slices the queries read are encoded (`oracles.smt.promotion_slice`),
    two equal slices are proved without z3, and the items are first asked together (see the
    module docstring); `reference=True` encodes the whole functions and asks item by item,
    as the invariant was first written, to check the default path against (both fail the
    same items; a refutation's model is whichever z3 picks)."""
    if not (is_loop_free(before_fn) and is_loop_free(after_fn)):
        return []
    sites_b, sites_a = memory_accesses(before_fn), memory_accesses(after_fn)
    if len(sites_b) != len(sites_a):
        return [f"{len(sites_b)} memory accesses before, {len(sites_a)} after: cannot match them"]
    failures = []
    for k, ((_, ins_b), (_, ins_a)) in enumerate(zip(sites_b, sites_a)):
        if (ins_b.name, ins_b.attrs["fmt"]) != (ins_a.name, ins_a.attrs["fmt"]):
            failures.append(f"access {k}: {_describe(ins_b)} before, {_describe(ins_a)} after")
    if failures:
        return failures
    if reference:
        # The prover encodes private clones (a caller may pass one function as both, or
        # share values between the two): the sites are taken again from those clones.
        prover = _Prover(before_fn, after_fn, timeout_ms, threads, texts)
        return _judge(prover, memory_accesses(prover.before_fn), memory_accesses(prover.after_fn))
    slice_b = query_slice(before_fn, [ins for _, ins in sites_b])
    slice_a = query_slice(after_fn, [ins for _, ins in sites_a])
    text_b, text_a = print_function(slice_b.function), print_function(slice_a.function)
    if text_b == text_a and slice_b.positions == slice_a.positions:
        # Equal slices encode to equal terms: every access's path and address, and the
        # undefinedness, are the same term on both sides, which the reference proves
        # without asking the solver.
        return []
    # A query reads memory (arrays) only where a slice keeps a loaded value.
    logic = "QF_ABV" if slice_b.reads_memory or slice_a.reads_memory else "QF_BV"
    prover = _Prover(slice_b.function, slice_a.function, timeout_ms, threads, (text_b, text_a),
                     logic)
    return _judge(prover, _sites(prover.before_fn, slice_b.positions),
                  _sites(prover.after_fn, slice_a.positions), together=True)


def _sites(fn: Function, positions) -> list[tuple[str, Instruction]]:
    """The accesses of a slice (or of its cached twin with the same text) by position."""
    return [(fn.blocks[b].name, fn.blocks[b].instructions[i]) for b, i in positions]


def _judge(prover: _Prover, sites_b, sites_a, *, together: bool = False) -> list[str]:
    """Every item's failure, asked one query per item. `together`: first ask whether any
    item can fail at all, one query for all (their OR): when that is proved unsatisfiable
    every item is proved, which is what each item's query would say; anything else (a
    refutation, whose model may show one item of several, or an unknown) asks the items one
    by one as before."""
    if together and prover.logic is not None:
        bads = []
        for k, (site_b, site_a) in enumerate(zip(sites_b, sites_a)):
            query = prover.access_query(k, site_b, site_a)
            if isinstance(query, str):
                bads = None  # a failure without the solver: ask item by item
                break
            if query is not None:
                bads.append(query[0])
        if bads is not None:
            undefined = prover.undefined_query()
            if undefined is not None:
                bads.append(undefined)
            if not bads:
                return []
            if prover.check(bads[0] if len(bads) == 1 else z3.Or(*bads))[0] == "proved":
                return []
    failures = []
    for k, (site_b, site_a) in enumerate(zip(sites_b, sites_a)):
        failure = prover.access(k, site_b, site_a)
        if failure:
            failures.append(failure)
    failure = prover.undefined()
    if failure:
        failures.append(failure)
    return failures
