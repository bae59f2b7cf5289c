"""The oracles the harness applies after a pass has run: each a name, the steps it applies
to, and a check.

A `Step` is one pass's input and output (and the SSA program the pipeline started from).
An oracle's `check` returns None when the step is fine, or a `Verdict` (a message and the
input set that shows it, when there is one). The harness loops over `STEP_ORACLES` in
order and reports the first verdict; a new oracle joins by adding a row here, not another
branch in the harness.

A verdict's signature key is what a finding's signature says of its message, so that one
bug gives one signature. An oracle with structured errors builds it from their kind and
fields (the RA checker: `ra_signature_key`); for the others it is the message with names
and numbers blanked (`normalized`). An oracle asks the harness only what `Judge` lists.

The crash, timeout and no-change oracles are about running the pass itself and stay in
the harness.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from agxir.ir import EXEC, MACHINE, SSA, VREG, Function
from agxir.passes.contract import (
    LOWERS_PRESSURE,
    PROMOTES_ADDRESS_MATH,
    WHOLE_BACKEND,
    Contract,
)
from agxir.passes.registry import CONTRACTS, promising
from agxir.verifier import verify
from oracles.encoding import encoding_failure
from oracles.inputs import InputSet
from oracles.liveness_reference import ReferenceLiveness
from oracles.machine.copy_checker import check_copy_lowering
from oracles.machine.pressure_oracle import demand_difference
from oracles.machine.ra_checker import (
    AlignmentError,
    Meaning,
    RAError,
    RAErrorKind,
    check_allocation,
)
from oracles.machine.schedule_oracle import pressure_rise
from oracles.outcomes import (
    RETRY_FACTOR,
    STATIC_FACTOR,
    STEP_FACTOR,
    Outcome,
    OutOfFuel,
    Returned,
    first_difference,
    output_budget,
    ran_away,
)

# The step oracles beyond the common ones hold a pass to what its contract promises
# (`Step.promises`; each promise is explained in agxir.passes.contract): after an
# address-math promoter, z3 proves the promotion cannot overflow (seed 001's invariant), on
# loop-free programs; after a pressure lowerer, no block's pressure (the most halves live at
# one point, from the reference liveness) may be higher than before; a whole backend is
# judged by refinement, not by the allocation checkers. The registered pressure lowerers, for
# the name rule of passes that declare nothing (`lowers_pressure`):
PRESSURE_LOWERING_PASSES = promising(LOWERS_PRESSURE)


def lowers_pressure(name: str) -> bool:
    """Whether a pass that carries no contract (`Step.contract` None: a user's `--pass` or
    `--pass-cmd`, or a zoo variant replayed as `--pass MODULE:CALLABLE`) is held to the
    `lowers-pressure` promise, by its name: a registered pass by its contract; any other
    name read as a pass name (for MODULE:CALLABLE, the callable, `_` as `-`) promises it
    when it is a pressure-lowering pass or begins with one and a `-`
    (`pressure-schedule-keeps-worse-order`, `mod:pressure_schedule_better`)."""
    contract = CONTRACTS.get(name)
    if contract is not None:
        return LOWERS_PRESSURE in contract.promises
    base = name.rpartition(":")[2].replace("_", "-")
    return any(base == p or base.startswith(p + "-") for p in PRESSURE_LOWERING_PASSES)


@dataclass(frozen=True)
class Step:
    name: str
    before: Function
    before_text: str
    after: Function
    after_text: str
    source: Function  # the SSA program the pipeline started from
    source_text: str
    # What the pass declares (`PassUnderTest.contract`): its promises switch on the oracles
    # that hold them. None: a pass that declares nothing (see `lowers_pressure`).
    contract: Contract | None = None

    def promises(self, promise: str) -> bool:
        """Whether the pass promises `promise`: by the contract it carries, else by the
        registry's for its name, else (it declares nothing) only `lowers-pressure`, by the
        name rule of `lowers_pressure`."""
        contract = self.contract if self.contract is not None else CONTRACTS.get(self.name)
        if contract is not None:
            return promise in contract.promises
        return promise == LOWERS_PRESSURE and lowers_pressure(self.name)

    @property
    def allocates(self) -> bool:
        """A register allocation: values or vregs in, physical registers out (a whole
        backend that optimizes before it allocates is judged by refinement instead)."""
        return (self.before.level in (EXEC, VREG) and self.after.level == MACHINE
                and not self.promises(WHOLE_BACKEND))

    @property
    def lowers_copies(self) -> bool:
        """Parallel copies sequentialized: machine in (no phis left), no copies out."""
        return (
            self.before.level == self.after.level == MACHINE
            and _has(self.before, "parallel_copy")
            and not _has(self.before, "phi")
            and not _has(self.after, "parallel_copy")
        )


def _has(fn: Function, opcode: str) -> bool:
    return any(ins.name == opcode for ins in fn.instructions())


@dataclass(frozen=True)
class Verdict:
    message: str
    input_set: InputSet | None = None
    signature_key: str | None = None  # None: `normalized(message)`


def normalized(message: str) -> str:
    """A message with names and numbers blanked, so one bug gives one signature."""
    message = re.sub(r"%\w+", "%_", message)
    message = re.sub(r"\b[0-9a-f]{8}\b", "N", message)  # memory words shown as bare hex
    return re.sub(r"\b(0x[0-9a-fA-F]+|\d+)\b", "N", message)


def _shape(meaning: Meaning) -> str:
    """What a signature says of a value a register should or may hold: an SSA value's name
    blanked, a vreg's kept and its width blanked (`v7:N`), a piece other than 0 as `[N]`."""
    base = "%_" if meaning.vreg_size is None else f"{meaning.name}:N"
    return base + ("[N]" if meaning.piece else "")


def ra_signature_key(error: RAError | AlignmentError) -> str:
    """An RA-checker error's signature key, from its kind and fields: the block and the
    register as they are, the instructions' texts with names and numbers blanked, each
    value by its `_shape`. It equals the key the message gave when signatures were read
    off messages, so a finding keeps the signature it had."""
    kind = error.kind
    if kind is RAErrorKind.WRONG_VALUE:
        held = ", ".join(_shape(m) for m in error.held) or "nothing the program defined"
        return (f"in {error.block}, `{normalized(error.instruction)}`: {error.register} "
                f"should hold {_shape(error.value)} but may hold {held}")
    if kind is RAErrorKind.BLOCKS_DIFFER:
        return "the allocated program's blocks differ from its input's"
    expected = "nothing" if error.expected is None else normalized(error.expected)
    if kind is RAErrorKind.MISSING_INSTRUCTION:
        return f"in {error.block}, `{expected}` is missing"
    return (f"in {error.block}, `{normalized(error.instruction or '')}` stands where the "
            f"input has `{expected}`")


class _Counts(Protocol):
    inconclusive: int


class Judge(Protocol):
    """What a step oracle may ask of the harness that runs it (fuzz.harness.Harness)."""

    fuel: int
    input_sets: Sequence[InputSet]
    check_liveness: bool
    tv_threads: int
    promotion_ms: int
    stats: _Counts

    def outcomes(self, fn: Function, text: str, fuel: int | None = None) -> list[Outcome]: ...

    def liveness_difference(self, fn: Function, text: str) -> str | None: ...

    def reference(self, fn: Function) -> ReferenceLiveness: ...


@dataclass(frozen=True)
class StepOracle:
    name: str
    applies: Callable[[Judge, Step], bool]
    check: Callable[[Judge, Step], Verdict | None]


def _verifier(harness: Judge, step: Step) -> Verdict | None:
    errors = verify(step.after)
    return Verdict(str(errors[0])) if errors else None


def _encoding(harness: Judge, step: Step) -> Verdict | None:
    problem = encoding_failure(step.before, step.after)
    return Verdict(str(problem)) if problem else None


def _liveness(harness: Judge, step: Step) -> Verdict | None:
    difference = harness.liveness_difference(step.after, step.after_text)
    return Verdict(difference) if difference else None


def _refinement(harness: Judge, step: Step) -> Verdict | None:
    """The output refines its input per input set. A machine-level output is compared with
    the SSA program the pipeline started from: that is what it must still compute.

    The output's fuel is relative to the input's own steps (`oracles.outcomes.output_budget`):
    a lowering may add instructions. An output out of it is run again with RETRY_FACTOR
    times as much; still out, it is a finding only when a lane of it was active past the
    budget (`ran_away`), else the step is inconclusive on that input set and counted
    (`Stats.inconclusive`), never a finding (docs/guarantees.md)."""
    if step.after.level == SSA:
        reference, reference_text = step.before, step.before_text
    else:
        reference, reference_text = step.source, step.source_text
    before = harness.outcomes(reference, reference_text)
    size = step.after.instruction_count()
    budgets = [output_budget(harness.fuel, s.steps, size) if isinstance(s, Returned)
               else harness.fuel for s in before]
    budget = max(budgets, default=harness.fuel)
    after = harness.outcomes(step.after, step.after_text, fuel=budget)
    retried = None
    inconclusive = False
    for index, (input_set, source, target) in enumerate(
            zip(harness.input_sets, before, after, strict=True)):
        if not isinstance(source, Returned):
            continue
        if isinstance(target, OutOfFuel):
            if retried is None:
                retried = harness.outcomes(step.after, step.after_text,
                                           fuel=RETRY_FACTOR * budget)
            target = retried[index]
            if isinstance(target, OutOfFuel):
                if not ran_away(target, budgets[index]):
                    inconclusive = True
                    continue
                return Verdict(
                    f"input returned after {source.steps} instructions but output was still "
                    f"running after {target.fuel}, a lane active for {target.active_steps} of "
                    f"them, past its budget of {budgets[index]} ({STEP_FACTOR} x the input's "
                    f"steps + {STATIC_FACTOR} x the output's {size} instructions, at least the "
                    f"fuel {harness.fuel})", input_set)
        difference = first_difference(source, target)
        if difference:
            return Verdict(difference, input_set)
    if inconclusive:
        harness.stats.inconclusive += 1
    return None


def _tv(harness: Judge, step: Step) -> Verdict | None:
    from oracles.smt.refinement import tv_finding  # loaded late: z3, only for --tv

    failure = tv_finding(step.before, step.after, harness.tv_threads)
    return Verdict(*failure) if failure else None


def _promotion(harness: Judge, step: Step) -> Verdict | None:
    # Loaded late: z3, whose import costs a process 0.3 s, only once a step promotes.
    from oracles.smt.promotion import promotion_failures

    threads = max(s.threads for s in harness.input_sets)
    failures = promotion_failures(
        step.before, step.after, timeout_ms=harness.promotion_ms, threads=threads,
        texts=(step.before_text, step.after_text),
    )
    return Verdict(failures[0]) if failures else None


def _ra_checker(harness: Judge, step: Step) -> Verdict | None:
    errors = check_allocation(step.before, step.after)
    if not errors:
        return None
    return Verdict(str(errors[0]), signature_key=ra_signature_key(errors[0]))


def _copy_checker(harness: Judge, step: Step) -> Verdict | None:
    errors = check_copy_lowering(step.before, step.after)
    return Verdict(str(errors[0])) if errors else None


def _demand(harness: Judge, step: Step) -> Verdict | None:
    difference = demand_difference(step.before, step.after, ref=harness.reference(step.before))
    return Verdict(difference) if difference else None


def _pressure(harness: Judge, step: Step) -> Verdict | None:
    rise = pressure_rise(step.before, step.after,
                         (harness.reference(step.before), harness.reference(step.after)))
    return Verdict(f"{rise}, though {step.name} promises lower pressure") if rise else None


def _ssa_only(harness: Judge, step: Step) -> bool:
    return step.before.level == step.after.level == SSA


STEP_ORACLES: tuple[StepOracle, ...] = (
    StepOracle("verifier", lambda h, s: True, _verifier),
    StepOracle("encoding", lambda h, s: True, _encoding),  # what AGX can encode (issue 19)
    StepOracle("liveness", lambda h, s: h.check_liveness and s.after.level in (SSA, EXEC),
               _liveness),
    StepOracle("ra-checker", lambda h, s: s.allocates, _ra_checker),
    StepOracle("demand", lambda h, s: s.allocates and s.before.level == EXEC, _demand),
    StepOracle("copy-checker", lambda h, s: s.lowers_copies, _copy_checker),
    StepOracle("refinement", lambda h, s: True, _refinement),
    StepOracle("pressure", lambda h, s: s.promises(LOWERS_PRESSURE) and _ssa_only(h, s),
               _pressure),
    StepOracle("tv", lambda h, s: bool(h.tv_threads) and _ssa_only(h, s), _tv),
    StepOracle("promotion",
               lambda h, s: bool(h.promotion_ms) and s.promises(PROMOTES_ADDRESS_MATH)
               and _ssa_only(h, s),
               _promotion),
)  # fmt: skip

# Every oracle a finding may name: the pass-running ones first, then the step oracles.
ORACLES: tuple[str, ...] = ("crash", "timeout", "memory-limit", "no-change") + tuple(
    o.name for o in STEP_ORACLES)
