"""The harness: one program through one pipeline, with every oracle after every pass.

After each pass: the pass must not raise or loop, and "reported no change" must mean the
function is unchanged (checked here: texts compared, or, for a pass that reports no change,
the function compared with its input structurally first, `agxir.structural.prints_as`);
then every oracle of `fuzz.step_oracles` that applies to the step (verifier, liveness, RA
checker, copy checker, refinement on the SSA or wave interpreter, tv, promotion). Refinement: input undefined, anything goes; input out
of fuel, skipped and counted; otherwise the same memory and outputs. The first failure is a
`Finding` naming the pass, the oracle, the input and the first difference.

Pipelines share prefixes (six machine pipelines open with lower-cf, the SSA pipelines with a
pass that also runs alone), so a pass run is memoized per program by (pass, input text): a
step whose pass already ran on the same text replays that run (its output, changed flag,
rule hits, near misses and paths) into the stats and features as a fresh run would. A
pass under test is taken to be a function of its input text, as the oracles' verdicts are.

While it checks a program the harness also collects the program's features
(`Harness.features`, see `fuzz.campaign_db.features`): which passes changed it, which rules fired
or near-missed, which oracle paths ran. A guided campaign keeps programs that reach new ones.
"""

from __future__ import annotations

import gc
import signal
import threading
from collections import Counter
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from agxir.ir import EXEC, MACHINE, SSA, Function, clone_function
from agxir.liveness import Liveness
from agxir.machine.paths import counting_paths
from agxir.rewrite import counting_rule_hits
from agxir.rewrite.matcher import recording_near_misses
from agxir.structural import prints_as
from agxir.text import print_function
from fuzz.campaign_db import features as feature
from fuzz.finding import Finding
from fuzz.pass_unit import PassTimedOut, PassUnderTest
from fuzz.processes import WALL_BACKSTOP, PassMemoryLimit, pass_memory_limit
from fuzz.step_oracles import (
    ORACLES,
    STEP_ORACLES,
    Step,
    Verdict,
    normalized,
)
from oracles.inputs import InputSet
from oracles.interp import DEFAULT_FUEL, CompiledFunction
from oracles.liveness_reference import ReferenceLiveness, compare_liveness, reference_liveness
from oracles.machine import run_wave
from oracles.machine.pressure_oracle import over_the_register_file
from oracles.outcomes import Outcome
from oracles.structure_reference import unstructurable_reason

__all__ = ["ORACLES", "Finding", "Harness", "Stats", "normalized"]

INPUT = "(input)"  # the name findings use for the program before any pass


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


@contextmanager
def deadline(seconds: float):
    """Interrupts a pass that runs too long: `seconds` of this process's CPU time
    (ITIMER_PROF: user and system, every thread), so a pass's verdict does not depend on
    how loaded the machine is, or WALL_BACKSTOP times as many seconds of wall-clock time
    (ITIMER_REAL), for a pass that sleeps or blocks. Either raises PassTimedOut. Signals
    only reach the main thread, so elsewhere the pass runs unbounded. CPU spent in a child
    process (an external command, the Mesa bridge) is not this process's: such a pass is
    bounded by the backstop, and by its own timeout if it has one."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise PassTimedOut()

    previous = signal.signal(signal.SIGPROF, expire), signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_BACKSTOP)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, previous[1])
        signal.signal(signal.SIGPROF, previous[0])


@dataclass(frozen=True)
class _PassRun:
    """What one pass did on one input text, kept to replay (see the module docstring)."""

    after: Function | None  # None: printed as the input (the input stands in for it)
    after_text: str
    changed: bool
    hits: Counter
    misses: frozenset
    paths: Counter


@contextmanager
def _young_collections():
    """While a program is checked, the cyclic garbage collector runs only on the young
    generations, after each pass step (`_collect_young`), never on the whole heap. Left to
    itself it rescans every live object each time the heap has grown by a quarter, and a
    long program's clones and memoized runs make that most of the time checking it takes
    (docs/performance.md, "Scale"). Young garbage cycles are still freed after each step.

    After each step only the youngest generation is collected, so what survives a step (the
    memoized runs' functions, cyclic: blocks and instructions refer to each other) waits in
    the middle one, and once the program is done, its memo dropped, one collection of the
    two young generations frees it (`_collect_program`). Collecting both after each step
    moved those survivors into the oldest generation, where only a full collection of the
    heap frees them: the collector then ran one every few programs (15 in 60, ~45 ms each
    on a campaign's heap); now hardly ever."""
    global _collecting
    if not gc.isenabled() or _collecting or threading.current_thread() is not threading.main_thread():
        yield
        return
    gc.disable()
    _collecting = True
    try:
        yield
    finally:
        _collecting = False
        gc.enable()


_collecting = False  # whether `_young_collections` holds the collector


def _collect_young() -> None:
    if _collecting:
        gc.collect(0)


def _collect_program() -> None:
    if _collecting:
        gc.collect(1)


def _first_changed_line(before: str, after: str) -> str:
    for old, new in zip(before.splitlines(), after.splitlines()):
        if old != new:
            return f"{old.strip()!r} became {new.strip()!r}"
    return "the number of lines changed"


def _declined(error: Exception, fn: Function) -> bool:
    """Control-flow lowering may decline an SSA program it cannot structure, and that is not
    a finding, but only when the independent reference (`oracles.structure_reference`,
    which shares no code with lower-cf) agrees the program is unstructurable: a lowering
    that gives up on a structurable program has crashed."""
    if type(error).__name__ != "Unstructurable" or fn.level != SSA:
        return False

    return unstructurable_reason(fn) is not None


def _over_the_bound(error: BaseException, exec_fn: Function | None) -> bool:
    """An allocator may give up on a program whose demand exceeds the register file (this
    model does not spill, nor does Mesa 23.3.6), and that is not a finding, but only when
    the reference demand of the pipeline's exec-level program agrees (a vreg program needs
    at least as much: out-of-SSA only adds copies): one that gives up below it has crashed."""
    if type(error).__name__ != "RegisterBoundExceeded" or exec_fn is None:
        return False

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
        # id(fn) -> (fn, its reference liveness): by identity, since the reference names the
        # function's own Values and Blocks; the function is held so the id stays its own
        self._references: dict[int, tuple[Function, ReferenceLiveness]] = {}
        self._verdicts: dict[tuple, tuple[str, Verdict] | None] = {}
        self._runs: dict[tuple, _PassRun] = {}  # (pass name, pass, input text) -> the run
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
            if fn.level == SSA:
                compiled = CompiledFunction(fn)
                found = compiled.run(self.input_sets, fuel=fuel)
                if compiled.diverged:
                    self.features.add(feature.oracle("divergent"))
            else:
                found = run_wave(fn, self.input_sets, fuel=fuel)
            self._outcomes[key] = found
        return found

    def step_verdict(self, step: Step) -> tuple[str, Verdict] | None:
        """The first oracle that rejects `step`: (oracle, its verdict).

        Pipelines share prefixes (every machine pipeline starts with lower-cf, two with ra),
        so a third of the steps of a program are ones already judged: the same pass, the same
        text in and out (and, below SSA, the same program the pipeline started from, which
        refinement compares with). Every oracle is a function of exactly those, so the
        verdict is reused, not recomputed."""
        key = (step.name, step.before_text, step.after_text,
               step.source_text if step.after.level != SSA else None)
        if key in self._verdicts:
            return self._verdicts[key]
        found = None
        for oracle in STEP_ORACLES:
            if oracle.applies(self, step):
                verdict = oracle.check(self, step)
                if verdict is not None:
                    found = oracle.name, verdict
                    break
        self._verdicts[key] = found
        return found

    def _reached(self, name: str, work: Function, paths: Counter) -> None:
        """The machine paths a pass run took (features `path:<pass>/<path>`), counted for
        the program if some pipeline brings it to the machine level."""
        self._machine = self._machine or work.level == MACHINE
        for path, count in paths.items():
            if count:
                self._paths.add(path)
                self.features.add(f"path:{name}/{path}")

    def liveness_difference(self, fn: Function, text: str) -> str | None:
        if not self.check_liveness:
            return None
        if text not in self._liveness:
            analysis = self.liveness_analysis or Liveness
            self._liveness[text] = compare_liveness(fn, analysis(fn), self.reference(fn))
        return self._liveness[text]

    def reference(self, fn: Function) -> ReferenceLiveness:
        """`fn`'s reference liveness, computed once per program: the liveness oracle after
        control-flow lowering, then the demand oracle of each allocator that takes the same
        exec function, and the pressure oracle before and after a schedule ask for it."""
        held = self._references.get(id(fn))
        if held is None:
            held = self._references[id(fn)] = (fn, reference_liveness(fn))
        return held[1]

    def _forget_runs_but_of(self, pipelines: Sequence[Sequence[PassUnderTest]],
                            wanted: set | None = None) -> None:
        """Drops the memoized runs of passes none of `pipelines` runs (their functions are
        what a long program's memory goes to). `wanted`: those passes' (name, run), when
        the caller has them."""
        if wanted is None:
            wanted = {(step.name, step.run) for pipeline in pipelines for step in pipeline}
        for key in [key for key in self._runs if key[:2] not in wanted]:
            del self._runs[key]

    # --- one program ----------------------------------------------------------------------------
    def check(self, fn: Function, pipelines: Sequence[Sequence[PassUnderTest]]) -> list[Finding]:
        """Every pipeline on `fn`; at most one finding per pipeline."""
        self._outcomes.clear()
        self._liveness.clear()
        self._references.clear()
        self._verdicts.clear()
        self._runs.clear()
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
        with _young_collections():
            # The passes each suffix of the pipelines runs, built once from the end.
            later: list[set] = [set()]
            for pipeline in reversed(pipelines):
                later.append(later[-1] | {(step.name, step.run) for step in pipeline})
            later.reverse()
            for index, pipeline in enumerate(pipelines):
                self._forget_runs_but_of(pipelines[index:], later[index])
                finding = self.check_pipeline(fn, text, pipeline)
                if finding:
                    findings.append(finding)
            self._runs.clear()
            _collect_program()  # this program's garbage, while it is still young
        if self._machine:
            self.stats.machine_programs += 1
            self.stats.pressure_paths.update(self._paths)
        return findings

    def check_pipeline(self, fn: Function, text: str, pipeline: Sequence[PassUnderTest]):
        original = text
        current, current_text = fn, text
        exec_fn = fn if fn.level == EXEC else None  # the last exec-level program seen
        names: list[str] = []
        features = self.features
        for position, step in enumerate(pipeline):
            _collect_young()  # the garbage of the step before (see `_young_collections`)
            names.append(step.name)

            def found(oracle: str, message: str, input_set=None, key=None, step=step) -> Finding:
                return Finding(step.name, oracle, message, tuple(names), original, input_set,
                               key)

            key = (step.name, step.run, current_text)
            run = self._runs.get(key)
            if run is None:
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
                if not changed and prints_as(current, current_text, work):
                    after = current_text  # what printing it would give, without the cost
                else:
                    try:
                        after = print_function(work)
                    except Exception as error:  # the pass left something that is not IR
                        return found("crash", f"the pass left an unprintable function: "
                                     f"{type(error).__name__}: {error}")
                run = _PassRun(None if after == current_text else work, after, bool(changed),
                               Counter(hits), frozenset(misses), Counter(paths))
                self._runs[key] = run
            work = current if run.after is None else run.after
            after, changed = run.after_text, run.changed
            self.stats.pass_runs[step.name] += 1
            self._reached(step.name, work, run.paths)
            for rule_name, where in run.misses:
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
            for rule, count in run.hits.items():
                self.stats.rule_hits[step.name, rule] += count
                features.add(feature.rule(step.name, rule))
            verdict = self.step_verdict(
                Step(step.name, current, current_text, work, after, fn, original, step.contract)
            )
            if verdict is not None:
                oracle, judged = verdict
                return found(oracle, judged.message, judged.input_set, judged.signature_key)
            current, current_text = work, after
            if work.level == EXEC:
                exec_fn = work
        return None
