"""Translation validation: does AFTER refine BEFORE, for every input of one thread?

`check_refinement(before, after, threads=32, timeout_ms=10000)` encodes both loop-free
functions (`oracles.smt.function`) against the same uniforms (matched by name: buffers at
the same addresses, scalars one shared symbolic value), the same fully symbolic initial
memory and the same symbolic thread id in [0, threads), and asks z3 for an assignment where

    BEFORE is defined  AND  ( AFTER is undefined
                              OR some output slot differs in written-ness, or in value where
                                 both wrote it
                              OR final memory differs at some address inside a buffer )

(the address is one symbolic probe constrained to lie inside some buffer; addresses outside
every buffer cannot be touched without undefined behaviour). Undefined behaviour in BEFORE
permits anything, so those inputs are excluded. This is the relation
`oracles.refinement_relation` states for the interpreter too; a slot's difference is its
`slot_differs`, built here over z3 terms.

* unsat: `Proved()`.
* sat: `Counterexample`: an `InputSet` built from the model (threads = thread id + 1,
  scalars from the model, every buffer byte from the model's initial memory), replayed in
  the interpreter; `replay_confirms` says whether it shows the difference (BEFORE returned,
  AFTER did not or returned something else). When the thread id is not 0, z3 is first asked
  for a thread-0 witness, which replays with fewer other threads in the way.
* unknown or timeout: `Unknown(reason)`, never reported as proved.

Scope: reasoning is per thread, which is exact for race-free programs: each thread then
reads only bytes no other thread writes. Data races (two threads, one byte, at least one
store) are out of scope here; the interpreter oracle checks them.

`tv_difference(before, after, threads)` is the harness's one-line form of the same check.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import z3

from agxir.ir import Function, Uniform
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.memory_model import buffer_base
from oracles.outcomes import Returned, first_difference
from oracles.refinement_relation import NOT_WRITTEN, Logic, slot_differs
from oracles.smt.bitvectors import Memory, function_memory
from oracles.smt.function import (
    EncodedFunction,
    Export,
    buffer_contents,
    encode_function,
    evaluate,
    is_loop_free,
    thread_bound,
)
from oracles.smt.limits import limit, mark, spent_ms

__all__ = [
    "Counterexample",
    "InterfaceMismatch",
    "Proved",
    "TvResult",
    "Unknown",
    "check_refinement",
    "replay",
    "tv_difference",
    "tv_finding",
]


@dataclass(frozen=True)
class Proved:
    """AFTER refines BEFORE for every thread id below the thread count and every input."""

    kind = "proved"

    def describe(self) -> str:
        return "proved"


@dataclass(frozen=True)
class Counterexample:
    """An input on which thread `thread` of BEFORE is defined and AFTER is not, or differs.
    `replay_confirms`: the interpreter shows a difference on `input_set`; `replay` says what
    the interpreter saw."""

    input_set: InputSet
    thread: int
    description: str
    replay_confirms: bool
    replay: str = ""

    kind = "counterexample"

    def describe(self) -> str:
        return f"counterexample: thread {self.thread}: {self.description}"


@dataclass(frozen=True)
class Unknown:
    """z3 gave no answer (timeout, resource limit, incomplete theory)."""

    reason: str

    kind = "unknown"

    def describe(self) -> str:
        return f"unknown: {self.reason}"


TvResult = Proved | Counterexample | Unknown


class InterfaceMismatch(ValueError):
    """BEFORE and AFTER do not take the same inputs (buffers, or a scalar's size)."""


# --- the query --------------------------------------------------------------------------------


def _buffers(fn: Function) -> list[Uniform]:
    return [u for u in fn.uniforms if u.is_buffer]


def _check_interfaces(before: Function, after: Function) -> None:
    left = [(u.name, u.buffer_bytes) for u in _buffers(before)]
    right = [(u.name, u.buffer_bytes) for u in _buffers(after)]
    if left != right:

        def show(buffers):
            return ", ".join(f"{name}:ptr[{size}]" for name, size in buffers) or "none"

        raise InterfaceMismatch(
            f"the functions declare different buffers: BEFORE {show(left)}, AFTER {show(right)}"
        )
    sizes = {u.name: u.size for u in before.uniforms if not u.is_buffer}
    for u in after.uniforms:
        if not u.is_buffer and sizes.get(u.name, u.size) != u.size:
            raise InterfaceMismatch(
                f"uniform {u.name} is {sizes[u.name]}-bit in BEFORE but {u.size}-bit in AFTER"
            )


@dataclass
class _Query:
    """Both encodings and the named difference conditions, kept to explain a model."""

    before: EncodedFunction
    after: EncodedFunction
    tid: z3.BitVecRef
    scalars: dict[str, z3.BitVecRef]
    initial: Memory
    probe: z3.BitVecRef
    slots: list[int]
    differences: list[tuple[str, object, z3.BoolRef]]


def _uniform_terms(fn: Function, scalars: dict[str, z3.BitVecRef]) -> dict:
    terms = {}
    for number, uniform in enumerate(_buffers(fn)):
        terms[uniform] = z3.BitVecVal(buffer_base(number), 64)
    for uniform in fn.uniforms:
        if not uniform.is_buffer:
            if uniform.name not in scalars:
                scalars[uniform.name] = z3.BitVec(f"uniform.{uniform.name}", uniform.size)
            terms[uniform] = scalars[uniform.name]
    return terms


Z3_LOGIC = Logic(or_=z3.Or, and_=z3.And, ne=operator.ne)


def _no_export() -> Export:
    written, value = NOT_WRITTEN
    return Export(z3.BoolVal(written), z3.BitVecVal(value, 64))


def _build_query(before: Function, after: Function) -> _Query:
    _check_interfaces(before, after)
    tid = z3.BitVec("thread_id", 32)
    scalars: dict[str, z3.BitVecRef] = {}
    initial = function_memory(before, name="initial_memory")
    encoded_before = encode_function(
        before, thread_id=tid, uniforms=_uniform_terms(before, scalars), memory=initial
    )
    encoded_after = encode_function(
        after, thread_id=tid, uniforms=_uniform_terms(after, scalars), memory=initial
    )
    differences: list[tuple[str, object, z3.BoolRef]] = [
        ("undefined", None, encoded_after.undefined)
    ]
    slots = sorted(set(encoded_before.exports) | set(encoded_after.exports))
    for slot in slots:
        want = encoded_before.exports.get(slot) or _no_export()
        got = encoded_after.exports.get(slot) or _no_export()
        differs = slot_differs(Z3_LOGIC, (want.written, want.value), (got.written, got.value))
        differences.append(("slot", slot, differs))
    probe = z3.BitVec("probe_address", 64)
    inside = [
        z3.And(z3.ULE(base, probe), z3.ULT(probe, base + size))
        for base, size in initial.buffers
    ]
    if inside:
        changed = z3.Select(encoded_before.memory.array, probe) != z3.Select(
            encoded_after.memory.array, probe
        )
        differences.append(("memory", None, z3.And(z3.Or(*inside), changed)))
    return _Query(
        encoded_before, encoded_after, tid, scalars, initial, probe, slots, differences
    )


def _solver(query: _Query, threads: int) -> z3.Solver:
    solver = z3.Solver()
    solver.add(thread_bound(query.tid, threads))
    solver.add(z3.Not(query.before.undefined))
    solver.add(z3.Or(*[cond for _, _, cond in query.differences]))
    return solver


# --- from a model to an input set and a description -------------------------------------------


def _eval(model: z3.ModelRef, term: z3.ExprRef):
    return evaluate([term], model)[0]


def _input_set(query: _Query, model: z3.ModelRef, before: Function) -> InputSet:
    tid = _eval(model, query.tid)
    scalars = {name: _eval(model, term) for name, term in query.scalars.items()}
    buffers = {
        uniform.name: buffer_contents(query.initial, number, model)
        for number, uniform in enumerate(_buffers(before))
    }
    return InputSet(tid + 1, scalars, buffers)


def _shown(written: bool, value: int) -> str:
    return f"{value:#x}" if written else "-"


def _describe(query: _Query, model: z3.ModelRef, before: Function) -> str:
    for kind, detail, cond in query.differences:
        if not _eval(model, cond):
            continue
        if kind == "undefined":
            reasons = [
                f"{reason} in block {block}"
                for reason, block, guarded in query.after.reasons
                if _eval(model, guarded)
            ]
            return "BEFORE is defined but AFTER is undefined (" + (reasons or ["?"])[0] + ")"
        if kind == "slot":
            want = query.before.exports.get(detail) or _no_export()
            got = query.after.exports.get(detail) or _no_export()
            a = _shown(_eval(model, want.written), _eval(model, want.value))
            b = _shown(_eval(model, got.written), _eval(model, got.value))
            return f"output slot {detail}: BEFORE {a}, AFTER {b}"
        address = _eval(model, query.probe)
        number = (address >> 32) - 1
        name = _buffers(before)[number].name
        old = _eval(model, z3.Select(query.before.memory.array, query.probe))
        new = _eval(model, z3.Select(query.after.memory.array, query.probe))
        offset = address - buffer_base(number)
        return f"buffer {name} byte {offset}: BEFORE {old:#04x}, AFTER {new:#04x}"
    return "no difference found in the model"  # z3 said sat; should not happen


# --- replay in the interpreter ----------------------------------------------------------------


def replay(before: Function, after: Function, input_set: InputSet) -> tuple[bool, str]:
    """Run both functions on `input_set`: (the interpreter shows AFTER failing to refine
    BEFORE, what it saw)."""
    source = CompiledFunction(before).run([input_set])[0]
    target = CompiledFunction(after).run([input_set])[0]
    if not isinstance(source, Returned):
        return False, f"BEFORE ended in {source.describe()}"
    difference = first_difference(source, target, ("BEFORE", "AFTER"))
    if difference is None:
        return False, "both returned the same outputs and memory"
    return True, difference


# --- the checks -------------------------------------------------------------------------------


def _check(solver: z3.Solver, timeout_ms: int) -> tuple[z3.CheckSatResult, str]:
    limit(solver, timeout_ms)
    try:
        result = solver.check()
    except z3.Z3Exception as error:  # resource exhaustion surfaces this way in some builds
        return z3.unknown, str(error)
    return result, (solver.reason_unknown() if result == z3.unknown else "")


def check_refinement(
    before: Function, after: Function, *, threads: int = 32, timeout_ms: int = 10000
) -> TvResult:
    """Whether loop-free `after` refines `before` (see the module docstring). Raises
    `NotLoopFree` if either has a loop and `InterfaceMismatch` if their buffers differ."""
    started = mark()
    query = _build_query(before, after)
    solver = _solver(query, threads)
    result, reason = _check(solver, timeout_ms)
    if result == z3.unsat:
        return Proved()
    if result != z3.sat:
        return Unknown(reason or "unknown")
    model = solver.model()
    if _eval(model, query.tid) != 0:
        # A thread-0 witness replays with a single thread: nothing else can go wrong first.
        left = timeout_ms - spent_ms(solver, started)
        if left > 0:
            solver.push()
            solver.add(query.tid == 0)
            retry, _ = _check(solver, left)
            if retry == z3.sat:
                model = solver.model()
            solver.pop()
    input_set = _input_set(query, model, before)
    description = _describe(query, model, before)
    confirms, seen = replay(before, after, input_set)
    return Counterexample(input_set, input_set.threads - 1, description, confirms, seen)


def tv_finding(
    before_fn: Function, after_fn: Function, threads: int, *, timeout_ms: int = 5000
) -> tuple[str, InputSet | None] | None:
    """The harness oracle: None when AFTER is proved to refine BEFORE, when z3 gives no
    answer, or when either function has a loop; otherwise a one-line description and the
    input set that shows it."""
    if not (is_loop_free(before_fn) and is_loop_free(after_fn)):
        return None
    try:
        result = check_refinement(before_fn, after_fn, threads=threads, timeout_ms=timeout_ms)
    except InterfaceMismatch as error:
        return str(error), None
    if not isinstance(result, Counterexample):
        return None
    scalars = ", ".join(f"{k}={v:#x}" for k, v in result.input_set.scalars.items())
    if result.replay_confirms:
        verdict = "the interpreter confirms"
    else:
        verdict = f"not confirmed by the interpreter: {result.replay}"
    inputs = f" with {scalars}" if scalars else ""
    return f"thread {result.thread}: {result.description}{inputs} ({verdict})", result.input_set


def tv_difference(
    before_fn: Function, after_fn: Function, threads: int, *, timeout_ms: int = 5000
) -> str | None:
    """`tv_finding` without the input set."""
    finding = tv_finding(before_fn, after_fn, threads, timeout_ms=timeout_ms)
    return finding[0] if finding else None
