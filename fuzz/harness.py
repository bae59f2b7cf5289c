"""The harness: one program through one pipeline, with every oracle after every pass.

After each pass: the pass must not raise or loop; "reported no change" must mean the
function is unchanged; the output must verify; liveness must equal the reference; and the
output must refine its input on every input set (input undefined: anything goes; input out
of fuel: skipped and counted; otherwise the same memory and outputs). The first failure is a
`Finding` naming the pass, the oracle, the input and the first difference.
"""

from __future__ import annotations

import re
import signal
import threading
from collections import Counter
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from agxir.ir import Function, clone_function
from agxir.text import print_function
from fuzz.passes_under_test import PassUnderTest
from oracles.inputs import InputSet
from oracles.interp import DEFAULT_FUEL, CompiledFunction
from oracles.outcomes import Outcome, Returned, first_difference

ORACLES = (
    "crash", "timeout", "no-change", "verifier", "liveness", "refinement", "tv", "promotion",
)
# Passes that promote 32-bit address math to 64 bits: after them, z3 proves the promotion
# cannot overflow (the invariant of seed 001), on loop-free programs.
PROMOTING_PASSES = frozenset({"address-cleanup", "address-fuse", "address-fold", "address-lower"})
INPUT = "(input)"  # the name findings use for the program before any pass


@dataclass
class Finding:
    pass_name: str
    oracle: str
    message: str
    pipeline: tuple[str, ...]  # the passes run, ending with the one that failed
    program: str  # the text given to the pipeline
    input_set: InputSet | None = None

    @property
    def signature(self) -> str:
        return f"{self.pass_name}|{self.oracle}|{normalized(self.message)}"


def normalized(message: str) -> str:
    """A message with names and numbers blanked, so one bug gives one signature."""
    message = re.sub(r"%\w+", "%_", message)
    message = re.sub(r"\b[0-9a-f]{8}\b", "N", message)  # memory words shown as bare hex
    return re.sub(r"\b(0x[0-9a-fA-F]+|\d+)\b", "N", message)


@dataclass
class Stats:
    programs: int = 0
    input_sets: int = 0
    skipped_undefined: int = 0
    skipped_out_of_fuel: int = 0
    pass_runs: Counter = field(default_factory=Counter)
    pass_changes: Counter = field(default_factory=Counter)

    def merge(self, other: Stats) -> None:
        self.programs += other.programs
        self.input_sets += other.input_sets
        self.skipped_undefined += other.skipped_undefined
        self.skipped_out_of_fuel += other.skipped_out_of_fuel
        self.pass_runs.update(other.pass_runs)
        self.pass_changes.update(other.pass_changes)


class PassTimedOut(Exception):
    pass


@contextmanager
def deadline(seconds: float):
    """Interrupts a pass that runs too long. Signals only reach the main thread, so
    elsewhere the pass runs unbounded."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise PassTimedOut()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _first_changed_line(before: str, after: str) -> str:
    for old, new in zip(before.splitlines(), after.splitlines()):
        if old != new:
            return f"{old.strip()!r} became {new.strip()!r}"
    return "the number of lines changed"


class Harness:
    """Checks programs under a fixed list of input sets; memoizes per program text."""

    def __init__(
        self,
        input_sets: Sequence[InputSet],
        *,
        fuel: int = DEFAULT_FUEL,
        pass_timeout: float = 10.0,
        check_liveness: bool = True,
        tv_threads: int = 0,
        liveness_analysis=None,
        promotion_ms: int = 2000,
    ):
        self.input_sets = list(input_sets)
        self.fuel = fuel
        self.pass_timeout = pass_timeout
        self.check_liveness = check_liveness
        self.liveness_analysis = liveness_analysis  # None: agxir.liveness.Liveness
        self.promotion_ms = promotion_ms  # z3 time per query for the promotion invariant; 0: off
        self.tv_threads = tv_threads  # 0: off; else z3 translation validation, loop-free only
        self.stats = Stats()
        self._outcomes: dict[str, list[Outcome]] = {}
        self._liveness: dict[str, str | None] = {}

    # --- memoized oracles ---------------------------------------------------------------------
    def outcomes(self, fn: Function, text: str) -> list[Outcome]:
        found = self._outcomes.get(text)
        if found is None:
            found = CompiledFunction(fn).run(self.input_sets, fuel=self.fuel)
            self._outcomes[text] = found
        return found

    def liveness_difference(self, fn: Function, text: str) -> str | None:
        if not self.check_liveness:
            return None
        if text not in self._liveness:
            from agxir.liveness import Liveness
            from oracles.liveness_reference import compare_liveness

            analysis = self.liveness_analysis or Liveness
            self._liveness[text] = compare_liveness(fn, analysis(fn))
        return self._liveness[text]

    # --- one program ----------------------------------------------------------------------------
    def check(self, fn: Function, pipelines: Sequence[Sequence[PassUnderTest]]) -> list[Finding]:
        """Every pipeline on `fn`; at most one finding per pipeline."""
        self._outcomes.clear()
        self._liveness.clear()
        text = print_function(fn)
        self.stats.programs += 1
        outcomes = self.outcomes(fn, text)
        self.stats.input_sets += len(outcomes)
        for outcome in outcomes:
            if outcome.kind == "undefined":
                self.stats.skipped_undefined += 1
            elif outcome.kind == "out_of_fuel":
                self.stats.skipped_out_of_fuel += 1
        findings = []
        difference = self.liveness_difference(fn, text)
        if difference:
            findings.append(Finding(INPUT, "liveness", difference, (), text))
        for pipeline in pipelines:
            finding = self.check_pipeline(fn, text, pipeline)
            if finding:
                findings.append(finding)
        return findings

    def check_pipeline(self, fn: Function, text: str, pipeline: Sequence[PassUnderTest]):
        from agxir.verifier import verify

        original = text
        current, current_text = fn, text
        names: list[str] = []
        for step in pipeline:
            names.append(step.name)

            def found(oracle: str, message: str, input_set=None, step=step) -> Finding:
                return Finding(step.name, oracle, message, tuple(names), original, input_set)

            work = clone_function(current)
            try:
                with deadline(self.pass_timeout):
                    changed = step.run(work)
            except PassTimedOut:
                return found("timeout", f"the pass ran longer than {self.pass_timeout:g} s")
            except Exception as error:  # a pass that raises is a finding, not our crash
                return found("crash", f"{type(error).__name__}: {error}")
            after = print_function(work)
            self.stats.pass_runs[step.name] += 1
            if not changed:
                if after != current_text:
                    change = _first_changed_line(current_text, after)
                    return found("no-change", f"reported no change but {change}")
                continue
            self.stats.pass_changes[step.name] += 1
            errors = verify(work)
            if errors:
                return found("verifier", str(errors[0]))
            difference = self.liveness_difference(work, after)
            if difference:
                return found("liveness", difference)
            before_outcomes = self.outcomes(current, current_text)
            after_outcomes = self.outcomes(work, after)
            for input_set, source, target in zip(
                self.input_sets, before_outcomes, after_outcomes, strict=True
            ):
                if not isinstance(source, Returned):
                    continue
                difference = first_difference(source, target)
                if difference:
                    return found("refinement", difference, input_set)
            if self.tv_threads:
                from oracles.smt.refinement import tv_finding

                proof_failure = tv_finding(current, work, self.tv_threads)
                if proof_failure:
                    return found("tv", *proof_failure)
            if self.promotion_ms and step.name in PROMOTING_PASSES:
                from oracles.smt.promotion import promotion_failures

                threads = max(s.threads for s in self.input_sets)
                failures = promotion_failures(
                    current, work, timeout_ms=self.promotion_ms, threads=threads
                )
                if failures:
                    return found("promotion", failures[0])
            current, current_text = work, after
        return None
