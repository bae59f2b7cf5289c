"""The harness: one program through one pipeline, with every oracle after every pass.

After each pass: the pass must not raise or loop, and "reported no change" must mean the
function is unchanged (checked here); then every oracle of `fuzz.step_oracles` that
applies to the step (verifier, liveness, RA checker, copy checker, refinement on the SSA
or wave interpreter, tv, promotion). Refinement: input undefined, anything goes; input out
of fuel, skipped and counted; otherwise the same memory and outputs. The first failure is a
`Finding` naming the pass, the oracle, the input and the first difference.

While it checks a program the harness also collects the program's features
(`Harness.features`, see `fuzz.corpus.features`): which passes changed it, which rules fired
or near-missed, which oracle paths ran. A guided campaign keeps programs that reach new ones.
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
from agxir.machine.paths import counting_paths
from agxir.rewrite import counting_rule_hits
from agxir.rewrite.matcher import recording_near_misses
from agxir.text import print_function
from fuzz.corpus import features as feature
from fuzz.passes_under_test import PassUnderTest
from fuzz.processes import PassMemoryLimit, pass_memory_limit
from fuzz.step_oracles import ORACLES, PROMOTING_PASSES, STEP_ORACLES, Step
from oracles.inputs import InputSet
from oracles.interp import DEFAULT_FUEL, CompiledFunction
from oracles.outcomes import Outcome

__all__ = ["ORACLES", "PROMOTING_PASSES", "Finding", "Harness", "Stats"]

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
    # Pipelines not run because control-flow lowering cannot structure the program (the
    # machine pipeline runs on every program it can structure; this says how many it could not).
    unstructurable: int = 0
    # Programs an allocator gave up on (RegisterBoundExceeded: no spilling) whose reference
    # demand really exceeds the register file (oracles.machine.pressure_oracle).
    unallocatable: int = 0
    # Steps whose refinement could not be judged on some input set: the output ran out of
    # the budget the input's own step count gives it (fuzz.step_oracles, docs/guarantees.md).
    inconclusive: int = 0
    # Programs a Mesa pass (fuzz/mesa/) could not take, and per opcode how many held it.
    not_translatable: int = 0
    not_translatable_opcodes: Counter = field(default_factory=Counter)
    pass_runs: Counter = field(default_factory=Counter)
    pass_changes: Counter = field(default_factory=Counter)
    # Rewrites by (pass, rule) in pass runs whose change the oracles then judged.
    rule_hits: Counter = field(default_factory=Counter)
    # A guided campaign's programs: drawn fresh from the seed, or mutants of corpus entries.
    fresh_programs: int = 0
    mutant_programs: int = 0
    # Time checking programs, without and under coverage (one program in K is sampled).
    plain_seconds: float = 0.0
    coverage_programs: int = 0
    coverage_seconds: float = 0.0
    # Programs some pipeline brought to the machine level (registers allocated), and how
    # many of them took each path the machine passes count (agxir.machine.paths).
    machine_programs: int = 0
    pressure_paths: Counter = field(default_factory=Counter)

    def merge(self, other: Stats) -> None:
        self.programs += other.programs
        self.input_sets += other.input_sets
        self.skipped_undefined += other.skipped_undefined
        self.skipped_out_of_fuel += other.skipped_out_of_fuel
        self.unstructurable += other.unstructurable
        self.unallocatable += other.unallocatable
        self.inconclusive += other.inconclusive
        self.not_translatable += other.not_translatable
        self.not_translatable_opcodes.update(other.not_translatable_opcodes)
        self.pass_runs.update(other.pass_runs)
        self.pass_changes.update(other.pass_changes)
        self.rule_hits.update(other.rule_hits)
        self.fresh_programs += other.fresh_programs
        self.mutant_programs += other.mutant_programs
        self.plain_seconds += other.plain_seconds
        self.coverage_programs += other.coverage_programs
        self.coverage_seconds += other.coverage_seconds
        self.machine_programs += other.machine_programs
        self.pressure_paths.update(other.pressure_paths)


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


def _declined(error: Exception, fn: Function) -> bool:
    """Control-flow lowering may decline an SSA program it cannot structure, and that is not
    a finding, but only when the independent predicate agrees the program is unstructurable:
    a lowering that gives up on a structurable program has crashed."""
    if type(error).__name__ != "Unstructurable" or fn.level != "ssa":
        return False
    from agxir.machine.lower_cf import structurable

    return structurable(fn) is not None


def _over_the_bound(error: BaseException, exec_fn: Function | None) -> bool:
    """An allocator may give up on a program whose demand exceeds the register file (this
    model does not spill, nor does Mesa 23.3.6), and that is not a finding, but only when
    the reference demand of the pipeline's exec-level program agrees (a vreg program needs
    at least as much: out-of-SSA only adds copies): one that gives up below it has crashed."""
    if type(error).__name__ != "RegisterBoundExceeded" or exec_fn is None:
        return False
    from oracles.machine.pressure_oracle import over_the_register_file

    return over_the_register_file(exec_fn) is not None


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
        self.features: set[str] = set()  # what the last program checked reached
        self._outcomes: dict[str, list[Outcome]] = {}
        self._liveness: dict[str, str | None] = {}
        self._verdicts: dict[tuple, tuple[str, str, InputSet | None] | None] = {}
        self._declined = False
        self._unallocatable = False
        self._paths: set[str] = set()
        self._machine = False

    # --- memoized oracles ---------------------------------------------------------------------
    def outcomes(self, fn: Function, text: str, fuel: int | None = None) -> list[Outcome]:
        """`fn`'s outcome per input set, with the run's fuel or (a pass's output, whose
        budget its input's steps set) `fuel`."""
        fuel = self.fuel if fuel is None else fuel
        key = text if fuel == self.fuel else (text, fuel)
        found = self._outcomes.get(key)
        if found is None:
            if fn.level == "ssa":
                compiled = CompiledFunction(fn)
                found = compiled.run(self.input_sets, fuel=fuel)
                if compiled.diverged:
                    self.features.add(feature.oracle("divergent"))
            else:
                from oracles.machine import run_wave

                found = run_wave(fn, self.input_sets, fuel=fuel)
            self._outcomes[key] = found
        return found

    def step_verdict(self, step: Step) -> tuple[str, str, InputSet | None] | None:
        """The first oracle that rejects `step`: (oracle, message, input set).

        Pipelines share prefixes (every machine pipeline starts with lower-cf, two with ra),
        so a third of the steps of a program are ones already judged: the same pass, the same
        text in and out (and, below SSA, the same program the pipeline started from, which
        refinement compares with). Every oracle is a function of exactly those, so the
        verdict is reused, not recomputed."""
        key = (step.name, step.before_text, step.after_text,
               step.source_text if step.after.level != "ssa" else None)
        if key in self._verdicts:
            return self._verdicts[key]
        found = None
        for oracle in STEP_ORACLES:
            if oracle.applies(self, step):
                verdict = oracle.check(self, step)
                if verdict is not None:
                    found = oracle.name, verdict.message, verdict.input_set
                    break
        self._verdicts[key] = found
        return found

    def _reached(self, name: str, work: Function, paths: Counter) -> None:
        """The machine paths a pass run took (features `path:<pass>/<path>`), counted for
        the program if some pipeline brings it to the machine level."""
        self._machine = self._machine or work.level == "machine"
        for path, count in paths.items():
            if count:
                self._paths.add(path)
                self.features.add(f"path:{name}/{path}")

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
        self._verdicts.clear()
        self._declined = False
        self._unallocatable = False
        self._paths: set[str] = set()  # the machine paths (agxir.machine.paths) reached
        self._machine = False  # whether some pass brought the program to the machine level
        self.features = features = set()
        text = print_function(fn)
        self.stats.programs += 1
        outcomes = self.outcomes(fn, text)
        self.stats.input_sets += len(outcomes)
        for outcome in outcomes:
            if outcome.kind == "undefined":
                self.stats.skipped_undefined += 1
                features.add(feature.oracle("undefined"))
                features.add(feature.oracle("undefined:" + feature.undefined_reason(outcome.reason)))
            elif outcome.kind == "out_of_fuel":
                self.stats.skipped_out_of_fuel += 1
                features.add(feature.oracle("out-of-fuel"))
            else:
                features.add(feature.oracle("returned"))
        findings = []
        difference = self.liveness_difference(fn, text)
        if difference:
            findings.append(Finding(INPUT, "liveness", difference, (), text))
        for pipeline in pipelines:
            finding = self.check_pipeline(fn, text, pipeline)
            if finding:
                findings.append(finding)
        if self._machine:
            self.stats.machine_programs += 1
            self.stats.pressure_paths.update(self._paths)
        return findings

    def check_pipeline(self, fn: Function, text: str, pipeline: Sequence[PassUnderTest]):
        original = text
        current, current_text = fn, text
        exec_fn = fn if fn.level == "exec" else None  # the last exec-level program seen
        names: list[str] = []
        features = self.features
        for position, step in enumerate(pipeline):
            names.append(step.name)

            def found(oracle: str, message: str, input_set=None, step=step) -> Finding:
                return Finding(step.name, oracle, message, tuple(names), original, input_set)

            work = clone_function(current)
            try:
                with deadline(self.pass_timeout), counting_rule_hits() as hits, \
                        recording_near_misses() as misses, counting_paths() as paths, \
                        pass_memory_limit():
                    changed = step.run(work)
            except PassTimedOut:
                return found("timeout", f"the pass ran longer than {self.pass_timeout:g} s")
            except PassMemoryLimit as error:  # --pass-memory, not a crash of the pass
                return found("memory-limit", str(error))
            except BaseException as error:  # a pass that raises (or exits) is a finding, not
                # our crash; Ctrl-C still stops the run, but a KeyboardInterrupt where SIGINT
                # is ignored (a campaign worker) can only have come from the pass
                if isinstance(error, KeyboardInterrupt) and (
                    signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
                ):
                    raise
                if type(error).__name__ == "NotTranslatable":  # fuzz/mesa/: Mesa has no
                    # counterpart for an opcode; counted once per program, not a finding
                    if not self._declined:
                        self.stats.not_translatable += 1
                        self.stats.not_translatable_opcodes.update(set(error.counts))
                        self._declined = True
                    return None
                if _declined(error, current):
                    if not self._declined:  # once per program, whatever the pipelines
                        self.stats.unstructurable += 1
                        self._declined = True
                        features.add(feature.oracle("unstructurable"))
                    return None
                if _over_the_bound(error, exec_fn):
                    if not self._unallocatable:  # once per program, like unstructurable
                        self.stats.unallocatable += 1
                        self._unallocatable = True
                        features.add(feature.oracle("unallocatable"))
                    return None
                return found("crash", f"{type(error).__name__}: {error}")
            try:
                after = print_function(work)
            except Exception as error:  # the pass left something that is not IR
                return found("crash", f"the pass left an unprintable function: "
                             f"{type(error).__name__}: {error}")
            self.stats.pass_runs[step.name] += 1
            self._reached(step.name, work, paths)
            for rule_name, where in misses:
                features.add(feature.near(step.name, rule_name, where))
            if not changed:
                if after != current_text:
                    change = _first_changed_line(current_text, after)
                    return found("no-change", f"reported no change but {change}")
                continue
            if after == current_text:
                return found("no-change", "reported a change but the function is unchanged")
            self.stats.pass_changes[step.name] += 1
            features.add(feature.changed(step.name))
            features.add(feature.changed_at(step.name, position))
            for rule, count in hits.items():
                self.stats.rule_hits[step.name, rule] += count
                features.add(feature.rule(step.name, rule))
            verdict = self.step_verdict(
                Step(step.name, current, current_text, work, after, fn, original)
            )
            if verdict is not None:
                oracle, message, input_set = verdict
                return found(oracle, message, input_set)
            current, current_text = work, after
            if work.level == "exec":
                exec_fn = work
        return None
