"""The campaign: generate programs from a seed, check each under every pipeline, on all cores.

Program i of a run with seed S is built from a seed derived from (S, i)
(`fuzz.generate.cases`), so `--seed S` replays a run and any one program can be rebuilt on
its own. Workers are forked processes that take every J-th program and tell the parent what
they find in typed messages (`fuzz.campaign_messages`); the parent (`_Campaign`) gathers
statistics, prints progress, replaces workers a pass took down, and reduces
(`fuzz.reduce.finding`), deduplicates and writes each new finding atomically.

With `guidance`, program i is fresh or a mutant of a corpus entry, and programs that reach
new features enter the corpus (`fuzz.campaign_db.guided`): with one job the seed still replays
the run; with several, each worker's programs depend on its own corpus only, and every
finding's record carries its program's choice bytes and origin, so it replays on its own.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for
from multiprocessing.context import ForkContext
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event

from agxir.ir import Function
from agxir.liveness import Liveness
from agxir.machine.pipeline import ALTERNATIVES
from agxir.text import print_function
from fuzz.campaign_db.db import CampaignDB
from fuzz.campaign_db.entry import CorpusEntry
from fuzz.campaign_db.guided import CampaignCorpus, Case, WorkerGuide, annotate_record, case_program
from fuzz.campaign_messages import Checked, Checking, Done, Failed, Found, Kept, Message, Reached
from fuzz.findings import FindingFiles, FindingStore, restore_unwritten, write_claimed

# Re-exported: fuzz.stats.runner and fuzz.mesa.agree still import it from here.
from fuzz.harness import Finding, Harness, Stats
from fuzz.passes_under_test import PassUnderTest
from fuzz.processes import (
    become_worker,
    death_verdict,
    describe_death,
    dies,
    in_child,
    kill_group,
    stamped,
    unstamp,
    watchdog_seconds,
)
from fuzz.reduce import change_shape, reduce_finding, reproducer_shape
from oracles.inputs import InputSet


@dataclass
class CampaignConfig:
    seed: int
    pipelines: Sequence[Sequence[PassUnderTest]]
    examples: int | None = None
    seconds: float | None = None
    jobs: int = 1
    size: int = 50
    threads: int = 32
    sets: int = 8
    pass_timeout: float = 10.0
    fail_fast: bool = False
    tv: bool = False  # the z3 translation-validation oracle on loop-free programs
    # Reducing a new finding before it is written: at most this many candidates tested, a
    # budget in programs, so the reproducer a seed gives is the same on a loaded machine
    # (the reductions bench/reduce.py measures test 43-233); the seconds are a backstop
    # for a slow pass. reduce_seconds 0: write as found.
    reduce_attempts: int | None = 1000
    reduce_seconds: float = 120.0
    # None: agxir.liveness.Liveness (the zoo swaps it)
    liveness_analysis: Callable[[Function], Liveness] | None = None
    address_heavy: bool = False  # programs whose memory accesses use address math shapes
    mesa_translatable: bool = False  # run --mesa: programs Mesa's backend can take (fuzz/mesa/)
    pass_memory_mb: int | None = 4096  # address space per worker: a pass that eats memory
    # fails with MemoryError (a crash finding) instead of taking the machine down
    hang_grace: float = 20.0  # a pass still running this long after its deadline has
    # defeated it (ignored SIGALRM, stopped itself): its worker is killed, a timeout finding
    shard: tuple[int, int] = (1, 1)  # (K, N): this run checks programs K-1, K-1+N, ...
    db: CampaignDB | None = None  # findings claimed there before written
    guidance: bool = False  # a coverage-guided corpus (fuzz.campaign_db.guided); off: the blind
    # stream tests pin
    shared_corpus: bool = False  # guided workers also start from the database's corpus
    coverage_every: int = 0  # branch coverage of the passes for one program in K (0: none)

    @property
    def stride(self) -> int:
        """Between one program of a worker and its next: the shard's J workers take turns
        within the shard's slice, so the N shards' J workers each cover every program once."""
        return self.jobs * self.shard[1]

    def first_index(self, job: int) -> int:
        return self.shard[0] - 1 + job * self.shard[1]

    @property
    def hang_seconds(self) -> float:
        return watchdog_seconds(self.pass_timeout, self.hang_grace)

    def units(self) -> dict[str, PassUnderTest]:
        """The passes under test by name."""
        return {unit.name: unit for pipeline in self.pipelines for unit in pipeline}

    def harness_options(self) -> dict:
        return {
            "pass_timeout": self.pass_timeout,
            "tv_threads": self.threads if self.tv else 0,
            "liveness_analysis": self.liveness_analysis,
        }


@dataclass
class CampaignResult:
    stats: Stats
    seconds: float
    # (Finding, files) for new signatures; files None when the run writes none
    findings: list[tuple[Finding, FindingFiles | None]] = field(default_factory=list)
    duplicates: int = 0
    internal_error: str | None = None
    worker_deaths: int = 0  # workers a pass took down (each reported, each replaced)
    outside_deaths: list[str] = field(default_factory=list)  # workers killed from outside the
    # run (a fresh process checks the program without dying): the run cannot vouch for itself
    hung_workers: int = 0  # workers killed because a pass defeated its deadline
    interrupted: bool = False  # stopped by Ctrl-C: the summary covers what was checked
    stopped_by: str = "Ctrl-C"  # what interrupted it: Ctrl-C (SIGINT) or SIGTERM
    memory_limit_hits: int = 0  # crash findings that were the memory limit
    shapes: dict[tuple, int] = field(default_factory=dict)  # (pass, oracle, shape) -> index
    more_like: list[int] = field(default_factory=list)  # per finding: later ones of its shape
    first_finding_seconds: float | None = None  # when the first finding arrived
    first_finding_program: int | None = None  # how many programs it took (index + 1)
    corpus: CampaignCorpus | None = None  # features reached, entries kept
    elsewhere: list[tuple[Finding, str | None]] = field(default_factory=list)  # (Finding,
    # claimant): found here too,
    # but another machine (or run) sharing the database claimed and writes it
    restored: list[FindingFiles] = field(default_factory=list)  # files written at start for
    # findings the
    # database recorded but a killed run never wrote

    @property
    def programs_per_second(self) -> float:
        return self.stats.programs / self.seconds if self.seconds else 0.0


def run_campaign(
    config: CampaignConfig,
    store: FindingStore | None,
    on_progress: Callable[[Stats, float, int], None] | None = None,
) -> CampaignResult:
    """Run the workers and gather what they send. Each worker has its own pipe, written
    synchronously: a pass that kills its process can never leave half a message behind, and
    the pipe's end of file tells the campaign the worker is gone. SIGINT and SIGTERM end the
    run with the summary of what was checked (`stopped_by_signals`)."""
    result = CampaignResult(Stats(), 0.0)
    with stopped_by_signals(result):
        try:
            campaign = _Campaign(config, store, result)
            for job in range(config.jobs):
                campaign.start(job)
            result.corpus = campaign.corpus
            if config.db is not None and store is not None:
                result.restored = restore_unwritten(config.db, store)
            last_progress = time.monotonic()
            try:
                while campaign.readers:
                    for reader in wait_for(list(campaign.readers), timeout=0.2):
                        campaign.receive(reader)
                    now = time.monotonic()
                    campaign.kill_overdue(now)
                    if on_progress and now - last_progress >= 1.0:
                        on_progress(result.stats, now - campaign.started, len(result.findings))
                        last_progress = now
            except KeyboardInterrupt:
                result.interrupted = True
                campaign.shared.stop.set()
                campaign.drain()
            finally:
                campaign.reap()
            result.seconds = time.monotonic() - campaign.started
        except KeyboardInterrupt:  # before the workers' loop: nothing was checked yet
            result.interrupted = True
    return result


@dataclass
class _Shared:
    """What the parent and its workers share in memory, made before they fork: per job, the
    program it checks (what the parent blames if the worker dies), the pass it runs (a
    `fuzz.processes.stamped` stamp) and since when (0: none); and the event that stops
    them all."""

    stop: Event
    current: ctypes.Array
    where: ctypes.Array
    since: ctypes.Array

    @classmethod
    def make(cls, context: ForkContext, jobs: int) -> _Shared:
        return cls(context.Event(), context.Array("q", jobs, lock=False),
                   context.Array("q", jobs, lock=False), context.Array("d", jobs, lock=False))


class _Campaign:
    """The parent's side of a run: its workers, what they share, and what it gathers from
    them into `result`. Every message a worker sends is handled in `handle`."""

    def __init__(self, config: CampaignConfig, store: FindingStore | None,
                 result: CampaignResult):
        self.config, self.store, self.result = config, store, result
        self.started = time.monotonic()
        self.stop_at = self.started + config.seconds if config.seconds is not None else None
        self.context = multiprocessing.get_context("fork")
        self.shared = _Shared.make(self.context, config.jobs)
        self.hung: set[int] = set()  # jobs killed because a pass defeated its deadline
        self.rechecked: set[int] = set()  # programs a worker killed from outside died on
        self.finished: set[int] = set()  # jobs that said Done
        self.seen: set[str] = set()  # the signatures of the findings recorded
        self.processes: dict[int, BaseProcess] = {}
        self.readers: dict[Connection, int] = {}  # each worker's pipe: its job
        self.corpus = CampaignCorpus(config)
        self.cases: dict[int, Case] = {}  # per job: the case of the program it checks (guidance)
        self.found_by: dict[int, list[CorpusEntry]] = {}  # per job: the corpus entries it sent

    def start(self, job: int, first: int | None = None) -> None:
        """Start worker `job` at program `first` (None: the job's first program)."""
        self.shared.since[job] = 0.0  # the slot's last pass was its predecessor's
        reader, writer = self.context.Pipe(duplex=False)
        # A replacement starts from what its predecessor had learnt.
        entries = self.corpus.loaded + self.found_by.get(job, [])
        first = self.config.first_index(job) if first is None else first
        process = self.context.Process(
            target=_work,
            args=(job, self.config, self.shared, writer, first, self.stop_at, entries),
            daemon=True,
        )
        process.start()
        writer.close()  # the worker holds the only write end: its exit is our end of file
        self.processes[job] = process
        self.readers[reader] = job

    def receive(self, reader: Connection) -> None:
        job = self.readers[reader]
        try:
            message = reader.recv()
        except (EOFError, OSError):
            self.gone(reader, job)
            return
        self.handle(message)

    def handle(self, message: Message) -> None:
        match message:
            case Checking(job, case):
                self.cases[job] = case
            case Found(job, index, finding):
                self.found(job, index, finding)
            case Reached(_, features):
                self.corpus.reached(features)
            case Kept(job, entry):
                self.found_by.setdefault(job, []).append(entry)
                self.corpus.offer(entry)
            case Checked(_, stats):
                self.result.stats.merge(stats)
            case Failed(_, error):
                self.result.internal_error = error
            case Done(job):
                self.finished.add(job)

    def found(self, job: int, index: int, finding: Finding) -> None:
        result = self.result
        if result.first_finding_seconds is None:
            result.first_finding_seconds = time.monotonic() - self.started
            result.first_finding_program = index + 1
        if self.config.fail_fast:
            # Stop the workers before reducing; what they found meanwhile is counted, not
            # reduced: a fail-fast run reports its first finding.
            self.shared.stop.set()
            if result.findings:
                result.duplicates += 1
                return
        _record(result, self.store, self.seen, finding, self.config, index,
                case=self.case(job, index))

    def case(self, job: int, index: int) -> Case | None:
        """Where worker `job`'s program `index` came from, if it said (guidance)."""
        case = self.cases.get(job)
        return case if case is not None and case.index == index else None

    def gone(self, reader: Connection, job: int) -> None:
        """Worker `job`'s pipe is closed. Gone without saying Done: a pass took the process
        down (or hung it, and `kill_overdue` killed it). Report it and let a replacement
        carry on with the rest of this worker's share."""
        del self.readers[reader]
        reader.close()
        process = self.processes[job]
        process.join(timeout=5)
        kill_group(process.pid)
        if job in self.finished:
            return
        config, result = self.config, self.result
        index = self.shared.current[job]
        case = self.case(job, index)
        if job in self.hung:
            self.hung.discard(job)
            result.hung_workers += 1
            finding = hang_finding(config, index, self.shared.where[job], case)
        else:
            finding = death_finding(config, index, case)
        if finding is None and index not in self.rechecked:
            # Killed from outside: not a pass's finding, but not a green run either. The
            # replacement checks this program again.
            self.rechecked.add(index)
            result.outside_deaths.append(
                f"worker {job} was {describe_death(_status(process))} on program "
                f"{index}, which a fresh process checks without dying"
            )
            self.start(job, index)
            return
        result.worker_deaths += 1
        if finding is not None:
            _record(result, self.store, self.seen, finding, config, index,
                    in_process=False, case=case)
        if config.fail_fast:
            self.shared.stop.set()
        self.start(job, index + config.stride)

    def kill_overdue(self, now: float) -> None:
        """Kill the workers whose pass defeated its deadline (`gone` reports them)."""
        for job, process in self.processes.items():
            began = self.shared.since[job]
            if began and now - began > self.config.hang_seconds and job not in self.hung:
                self.hung.add(job)
                process.kill()

    def drain(self) -> None:
        """After Ctrl-C: collect the statistics the workers still send as they stop (the
        rest of what they send is dropped: the run is over)."""
        deadline = time.monotonic() + 5
        while self.readers and time.monotonic() < deadline:
            try:
                ready = wait_for(list(self.readers), timeout=0.1)
            except KeyboardInterrupt:
                continue
            for reader in ready:
                try:
                    message = reader.recv()
                except (EOFError, OSError):
                    del self.readers[reader]
                    continue
                if isinstance(message, Checked):
                    self.handle(message)

    def reap(self) -> None:
        for process in self.processes.values():
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join(timeout=5)
            kill_group(process.pid)


def _work(job: int, config: CampaignConfig, shared: _Shared, pipe: Connection, start: int,
          stop_at: float | None, entries: list[CorpusEntry]) -> None:
    """Worker `job`: check every `config.stride`-th program from `start`, each pass stamped
    in `shared`, and send the parent what it finds."""
    become_worker(config.pass_memory_mb)
    index = start
    pipelines = stamped(config.pipelines, job, shared.where, shared.since)
    try:
        guide = WorkerGuide(config, entries)
        while config.examples is None or index < config.examples:
            if shared.stop.is_set() or (stop_at is not None and time.monotonic() >= stop_at):
                break
            shared.current[job] = index  # what the parent blames if this process dies
            case, fn, inputs, frames = guide.next(index)
            if guide.on:  # before checking: what the parent rebuilds if this process dies
                pipe.send(Checking(job, case))
            harness = Harness(inputs, **config.harness_options())
            findings = _check(harness, fn, alternatives(pipelines, config.seed, index), guide,
                              index)
            if guide.on:
                if case.parent is None:
                    harness.stats.fresh_programs += 1
                else:
                    harness.stats.mutant_programs += 1
            for finding in findings:
                pipe.send(Found(job, index, finding))
            reached, entry = guide.observe(case, harness.features, frames)
            if reached:
                pipe.send(Reached(job, frozenset(reached)))
            if entry is not None:
                pipe.send(Kept(job, entry))
            pipe.send(Checked(job, harness.stats))
            index += config.stride
    except BaseException as error:  # a harness bug: report it with what replays it
        pipe.send(Failed(job, f"program {index}: {type(error).__name__}: {error}"))
    pipe.send(Done(job))


def alternatives(pipelines: Sequence[Sequence[PassUnderTest]], seed: int,
                 index: int) -> list[Sequence[PassUnderTest]]:
    """The pipelines program `index` runs: every one, except that of the pipelines in
    `agxir.machine.pipeline.ALTERNATIVES` (Mesa's route at each tight register bound) it
    runs one, drawn with their weights from (seed, index), so `--seed` replays the choice
    and a finding's pipeline names the bound. With fewer than two of them, all run."""
    weights = dict(ALTERNATIVES)
    names = [tuple(unit.name for unit in pipeline) for pipeline in pipelines]
    group = [i for i, name in enumerate(names) if name in weights]
    if len(group) < 2:
        return list(pipelines)
    rng = random.Random(f"agxfuzz-bound:{seed}:{index}")
    chosen = rng.choices(group, [weights[names[i]] for i in group])[0]
    return [p for i, p in enumerate(pipelines) if i == chosen or i not in group]


def _check(harness: Harness, fn: Function, pipelines: list[Sequence[PassUnderTest]],
           guide: WorkerGuide, index: int) -> list[Finding]:
    """`harness.check`, timed, under coverage for one program in K (its arcs join the
    program's features)."""
    started = time.perf_counter()
    if guide.sampler.wants(index):
        arcs: set[str] = set()
        with guide.sampler.measuring(arcs):
            findings = harness.check(fn, pipelines)
        harness.features |= arcs
        harness.stats.coverage_programs += 1
        harness.stats.coverage_seconds += time.perf_counter() - started
    else:
        findings = harness.check(fn, pipelines)
        harness.stats.plain_seconds += time.perf_counter() - started
    return findings


def _dies(fn: Function, inputs: Sequence[InputSet], pipeline: Sequence[PassUnderTest],
          config: CampaignConfig) -> int | None:
    """Run one pipeline on one program in a forked child: how it died, or None."""
    return dies(lambda: Harness(inputs, **config.harness_options()).check(fn, [pipeline]),
                seconds=config.hang_seconds * len(pipeline) + 30,
                memory_mb=config.pass_memory_mb)


def death_finding(config: CampaignConfig, index: int,
                  case: Case | None = None) -> Finding | None:
    """The finding for a worker that died on program `index`: which pipeline and step kill
    a fresh process too (found by forking one child per prefix). None if no fresh process
    dies on it: the worker was killed from outside the run, not by a pass."""
    fn, inputs = case_program(config, case, index)
    text = print_function(fn)
    for pipeline in config.pipelines:
        status = _dies(fn, inputs, pipeline, config)
        if status is None:
            continue
        for length in range(1, len(pipeline) + 1):
            step_status = _dies(fn, inputs, pipeline[:length], config)
            if step_status is not None:
                names = tuple(step.name for step in pipeline[:length])
                oracle, message = death_verdict(
                    lambda prefix=pipeline[:length]: Harness(
                        inputs, **config.harness_options()).check(fn, [prefix]),
                    step_status, seconds=config.hang_seconds * length + 30,
                    memory_mb=config.pass_memory_mb)
                return Finding(names[-1], oracle, message, names, text, inputs[0])
    return None


def hang_finding(config: CampaignConfig, index: int, stamp: int,
                 case: Case | None = None) -> Finding:
    """The finding for a worker killed because the pass at `stamp` overran its deadline."""
    fn, inputs = case_program(config, case, index)
    number, step = unstamp(stamp)
    names = tuple(unit.name for unit in config.pipelines[number][: step + 1])
    message = (f"the pass ran longer than {config.pass_timeout:g} s and did not stop at its "
               f"deadline: its worker was killed after {config.hang_seconds:g} s")
    return Finding(names[-1], "timeout", message, names, print_function(fn), inputs[0])


STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


@contextmanager
def stopped_by_signals(result: CampaignResult):
    """SIGINT and SIGTERM stop the campaign with its summary (`result.interrupted`), even in
    a process started with SIGINT ignored (a CI runner's or pytest-xdist's child), where
    Python never raises KeyboardInterrupt by itself. A process forked meanwhile that has
    not set its own handlers (a worker ignores SIGINT) dies of SIGTERM as by default."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread; its caller handles Ctrl-C
        return
    owner = os.getpid()

    def stop(number, frame):
        if os.getpid() != owner:  # a forked child that kept the campaign's handler
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
            return
        if not result.interrupted:
            result.stopped_by = STOP_SIGNALS[number]
        raise KeyboardInterrupt

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _status(process: BaseProcess) -> int:
    """A wait status for describe_death from a multiprocessing exit code."""
    code = process.exitcode
    if code is None:
        return 9  # not reaped: say SIGKILL, which is what the campaign would have sent
    return -code if code < 0 else code << 8


def _record(result: CampaignResult, store: FindingStore | None, seen: set[str],
            finding: Finding, config: CampaignConfig, index: int, *, in_process: bool = True,
            case: Case | None = None) -> None:
    """Deduplicate, reduce and write one finding. Reduction and deduplication re-run the
    pass in a forked child (never in the campaign's own process, which a pass could exit or
    hang); `in_process=False` for a pass that takes its process down: it is not re-run.
    `case`: where a guided campaign's program came from (None: the blind stream's `index`)."""
    if finding.oracle == "memory-limit":
        result.memory_limit_hits += 1
    if finding.signature in seen:
        result.duplicates += 1
        return
    seen.add(finding.signature)
    # A pass that took its process down is reduced too, each candidate in a supervised
    # child of the reducing one (interesting: it dies the same way); a hang is not.
    if config.reduce_seconds > 0 and (in_process or finding.oracle != "timeout"):
        finding = in_child(
            _reduced, finding, config, index, case, not in_process,
            memory_mb=config.pass_memory_mb,
            seconds=config.reduce_seconds + config.hang_seconds + 30,
        ) or finding
    # One bug, one finding: messages name slots, buffers and opcodes that differ between
    # programs, but the reduced reproducers of one bug have one shape.
    if in_process and finding.oracle not in ("crash", "timeout", "memory-limit"):
        change = in_child(change_shape, finding, config.units(), memory_mb=config.pass_memory_mb,
                          seconds=2 * config.hang_seconds + 30)
        shape = (finding.pass_name, finding.oracle,
                 change or reproducer_shape(finding.program))
    else:  # never re-run a pass that crashed or hung in this process
        shape = (finding.pass_name, finding.oracle, reproducer_shape(finding.program))
    if shape in result.shapes:
        result.more_like[result.shapes[shape]] += 1
        result.duplicates += 1
        return
    files = None
    if store is not None:
        files = write_claimed(config.db, store, finding, seed=config.seed, index=index,
                              shard="{}/{}".format(*config.shard))
        if files is None:  # claimed by another machine sharing the database: its to write
            result.duplicates += 1
            result.elsewhere.append((finding, config.db.claimant(finding.signature)))
            return
        if case is not None:
            annotate_record(files.record, case)
    result.shapes[shape] = len(result.findings)
    result.more_like.append(0)
    result.findings.append((finding, files))


def _reduced(finding: Finding, config: CampaignConfig, index: int, case: Case | None,
             supervised: bool) -> Finding:
    """`reduce_finding` on the program the finding was found on, rebuilt here (in the
    child `_record` runs this in) within the configuration's budget."""
    fn, inputs = case_program(config, case, index)
    return reduce_finding(finding, fn, inputs, config.units(),
                          harness_options=config.harness_options(),
                          attempts=config.reduce_attempts, seconds=config.reduce_seconds,
                          memory_mb=config.pass_memory_mb if supervised else None,
                          supervised=supervised)


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
