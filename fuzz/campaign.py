"""The campaign: generate programs from a seed, check each under every pipeline, on all cores.

Program i of a run with seed S is built from a seed derived from (S, i), so `--seed S`
replays a run and any one program can be rebuilt on its own. Workers are forked processes
that take every J-th program; the parent gathers statistics, prints progress and writes each
new finding (deduplicated by signature) atomically.

With `guidance`, program i is fresh or a mutant of a corpus entry, and programs that reach
new features enter the corpus (`fuzz.corpus.guided`): with one job the seed still replays
the run; with several, each worker's programs depend on its own corpus only, and every
finding's record carries its program's choice bytes and origin, so it replays on its own.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_for

from fuzz.corpus.guided import Case, case_program
from fuzz.findings import FindingStore

# Re-exported: fuzz.stats.runner and fuzz.mesa.agree still import it from here.
from fuzz.generate.cases import program_seed  # noqa: F401
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
    liveness_analysis: object = None  # None: agxir.liveness.Liveness (the zoo swaps it)
    address_heavy: bool = False  # programs whose memory accesses use address math shapes
    mesa_translatable: bool = False  # run --mesa: programs Mesa's backend can take (fuzz/mesa/)
    pass_memory_mb: int | None = 4096  # address space per worker: a pass that eats memory
    # fails with MemoryError (a crash finding) instead of taking the machine down
    hang_grace: float = 20.0  # a pass still running this long after its deadline has
    # defeated it (ignored SIGALRM, stopped itself): its worker is killed, a timeout finding
    shard: tuple[int, int] = (1, 1)  # (K, N): this run checks programs K-1, K-1+N, ...
    db: object = None  # a fuzz.corpus.db.CampaignDB: findings claimed there before written
    guidance: bool = False  # a coverage-guided corpus (fuzz.corpus.guided); off: the blind
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
    findings: list = field(default_factory=list)  # (Finding, files) for new signatures
    duplicates: int = 0
    internal_error: str | None = None
    worker_deaths: int = 0  # workers a pass took down (each reported, each replaced)
    outside_deaths: list = field(default_factory=list)  # workers killed from outside the
    # run (a fresh process checks the program without dying): the run cannot vouch for itself
    hung_workers: int = 0  # workers killed because a pass defeated its deadline
    interrupted: bool = False  # stopped by Ctrl-C: the summary covers what was checked
    stopped_by: str = "Ctrl-C"  # what interrupted it: Ctrl-C (SIGINT) or SIGTERM
    memory_limit_hits: int = 0  # crash findings that were the memory limit
    shapes: dict = field(default_factory=dict)  # (pass, oracle, reproducer shape) -> index
    more_like: list = field(default_factory=list)  # per finding: later ones of that shape
    first_finding_seconds: float | None = None  # when the first finding arrived
    first_finding_program: int | None = None  # how many programs it took (index + 1)
    corpus: object = None  # fuzz.corpus.guided.CampaignCorpus: features reached, entries kept
    elsewhere: list = field(default_factory=list)  # (Finding, claimant): found here too,
    # but another machine (or run) sharing the database claimed and writes it
    restored: list = field(default_factory=list)  # files written at start for findings the
    # database recorded but a killed run never wrote

    @property
    def programs_per_second(self) -> float:
        return self.stats.programs / self.seconds if self.seconds else 0.0


def _work(job: int, config: CampaignConfig, stop_at: float | None, messages, stop,
          current=None, start: int | None = None, where=None, since=None, entries=()) -> None:
    from fuzz.corpus.guided import WorkerGuide

    become_worker(config.pass_memory_mb)
    index = config.first_index(job) if start is None else start
    pipelines = config.pipelines if where is None else stamped(config.pipelines, job, where, since)
    try:
        guide = WorkerGuide(config, entries)
        while config.examples is None or index < config.examples:
            if stop.is_set() or (stop_at is not None and time.monotonic() >= stop_at):
                break
            if current is not None:
                current[job] = index  # what the parent blames if this process dies
            case, fn, inputs, frames = guide.next(index)
            if guide.on:  # before checking: what the parent rebuilds if this process dies
                messages.send(("case", job, case))
            harness = Harness(inputs, **config.harness_options())
            findings = _check(harness, fn, alternatives(pipelines, config.seed, index), guide,
                              index)
            if guide.on:
                if case.parent is None:
                    harness.stats.fresh_programs += 1
                else:
                    harness.stats.mutant_programs += 1
            for finding in findings:
                messages.send(("finding", index, finding))
            reached, entry = guide.observe(case, harness.features, frames)
            if reached:
                messages.send(("features", job, frozenset(reached)))
            if entry is not None:
                messages.send(("entry", job, entry))
            # Per program, so a worker that dies has had every program it finished counted.
            messages.send(("stats", job, harness.stats))
            index += config.stride
    except BaseException as error:  # a harness bug: report it with what replays it
        messages.send(("error", job, f"program {index}: {type(error).__name__}: {error}"))
    messages.send(("done", job, None))


def alternatives(pipelines, seed: int, index: int) -> list:
    """The pipelines program `index` runs: every one, except that of the pipelines in
    `agxir.machine.pipeline.ALTERNATIVES` (Mesa's route at each tight register bound) it
    runs one, drawn with their weights from (seed, index), so `--seed` replays the choice
    and a finding's pipeline names the bound. With fewer than two of them, all run."""
    import random

    from agxir.machine.pipeline import ALTERNATIVES

    weights = dict(ALTERNATIVES)
    names = [tuple(unit.name for unit in pipeline) for pipeline in pipelines]
    group = [i for i, name in enumerate(names) if name in weights]
    if len(group) < 2:
        return list(pipelines)
    rng = random.Random(f"agxfuzz-bound:{seed}:{index}")
    chosen = rng.choices(group, [weights[names[i]] for i in group])[0]
    return [p for i, p in enumerate(pipelines) if i == chosen or i not in group]


def _check(harness: Harness, fn, pipelines, guide, index: int) -> list[Finding]:
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


def _dies(fn, inputs, pipeline, config: CampaignConfig):
    """Run one pipeline on one program in a forked child: how it died, or None."""
    return dies(lambda: Harness(inputs, **config.harness_options()).check(fn, [pipeline]),
                seconds=config.hang_seconds * len(pipeline) + 30,
                memory_mb=config.pass_memory_mb)


def death_finding(config: CampaignConfig, index: int, case=None) -> Finding | None:
    """The finding for a worker that died on program `index`: which pipeline and step kill
    a fresh process too (found by forking one child per prefix). None if no fresh process
    dies on it: the worker was killed from outside the run, not by a pass."""
    from agxir.text import print_function

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


def hang_finding(config: CampaignConfig, index: int, stamp: int, case=None) -> Finding:
    """The finding for a worker killed because the pass at `stamp` overran its deadline."""
    from agxir.text import print_function

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
            return _run_campaign(config, store, on_progress, result)
        except KeyboardInterrupt:  # before the workers' loop: nothing was checked yet
            result.interrupted = True
            return result


def _run_campaign(config: CampaignConfig, store, on_progress, result: CampaignResult):
    started = time.monotonic()
    stop_at = started + config.seconds if config.seconds is not None else None
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    current = context.Array("q", config.jobs, lock=False)
    where = context.Array("q", config.jobs, lock=False)  # the pass each worker runs
    since = context.Array("d", config.jobs, lock=False)  # since when (0: none)
    hung: set[int] = set()
    rechecked: set[int] = set()  # programs a worker killed from outside died on
    processes: dict[int, object] = {}
    readers: dict[object, int] = {}
    from fuzz.corpus.guided import CampaignCorpus

    corpus = CampaignCorpus(config)
    cases: dict[int, object] = {}  # per job: the case of the program it checks (guidance)
    found_by: dict[int, list] = {}  # per job: the corpus entries it sent

    def start(job: int, first: int | None = None) -> None:
        since[job] = 0.0  # the slot's last pass was its predecessor's
        reader, writer = context.Pipe(duplex=False)
        # A replacement starts from what its predecessor had learnt.
        entries = corpus.loaded + found_by.get(job, [])
        process = context.Process(
            target=_work,
            args=(job, config, stop_at, writer, stop, current, first, where, since, entries),
            daemon=True,
        )
        process.start()
        writer.close()  # the worker holds the only write end: its exit is our end of file
        processes[job] = process
        readers[reader] = job

    for job in range(config.jobs):
        start(job)
    finished: set[int] = set()
    result.corpus = corpus
    if config.db is not None and store is not None:
        from fuzz.findings import restore_unwritten

        result.restored = restore_unwritten(config.db, store)
    seen: set[str] = set()
    last_progress = time.monotonic()
    try:
        while readers:
            for reader in wait_for(list(readers), timeout=0.2):
                job = readers[reader]
                try:
                    kind, who, payload = reader.recv()
                except (EOFError, OSError):
                    del readers[reader]
                    reader.close()
                    process = processes[job]
                    process.join(timeout=5)
                    kill_group(process.pid)
                    if job not in finished:
                        # Gone without saying done: a pass took the process down. Report it
                        # and let a replacement carry on with the rest of this worker's share.
                        index = current[job]
                        case = cases.get(job)
                        case = case if case is not None and case.index == index else None
                        if job in hung:
                            hung.discard(job)
                            result.hung_workers += 1
                            finding = hang_finding(config, index, where[job], case)
                        else:
                            finding = death_finding(config, index, case)
                        if finding is None and index not in rechecked:
                            # Killed from outside: not a pass's finding, but not a green run
                            # either. The replacement checks this program again.
                            rechecked.add(index)
                            result.outside_deaths.append(
                                f"worker {job} was {describe_death(_status(process))} on program "
                                f"{index}, which a fresh process checks without dying"
                            )
                            start(job, index)
                            continue
                        result.worker_deaths += 1
                        if finding is not None:
                            _record(result, store, seen, finding, config, index,
                                    in_process=False, case=case)
                        if config.fail_fast:
                            stop.set()
                        start(job, index + config.stride)
                    continue
                if kind == "case":
                    cases[job] = payload
                elif kind == "entry":
                    found_by.setdefault(job, []).append(payload)
                    corpus.offer(payload)
                elif kind == "features":
                    corpus.reached(payload)
                else:
                    case = cases.get(job) if kind == "finding" else None
                    _handle(kind, who, payload, result, store, seen, config, stop, finished,
                            started, case if case is not None and case.index == who else None)
            now = time.monotonic()
            for job, process in processes.items():  # a pass that defeated its deadline
                began = since[job]
                if began and now - began > config.hang_seconds and job not in hung:
                    hung.add(job)
                    process.kill()
            if on_progress and now - last_progress >= 1.0:
                on_progress(result.stats, now - started, len(result.findings))
                last_progress = now
    except KeyboardInterrupt:
        result.interrupted = True
        stop.set()
        _drain(readers, result)
    finally:
        for process in processes.values():
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join(timeout=5)
            kill_group(process.pid)
    result.seconds = time.monotonic() - started
    return result


def _status(process) -> int:
    """A wait status for describe_death from a multiprocessing exit code."""
    code = process.exitcode
    if code is None:
        return 9  # not reaped: say SIGKILL, which is what the campaign would have sent
    return -code if code < 0 else code << 8


def _handle(kind, who, payload, result, store, seen, config, stop, finished, started,
            case=None) -> None:
    if kind == "stats":
        result.stats.merge(payload)
    elif kind == "finding":
        if result.first_finding_seconds is None:
            result.first_finding_seconds = time.monotonic() - started
            result.first_finding_program = who + 1
        if config.fail_fast:
            # Stop the workers before reducing; what they found meanwhile is counted, not
            # reduced: a fail-fast run reports its first finding.
            stop.set()
            if result.findings:
                result.duplicates += 1
                return
        _record(result, store, seen, payload, config, who, case=case)
    elif kind == "error":
        result.internal_error = payload
    elif kind == "done":
        finished.add(who)


def _drain(readers, result: CampaignResult) -> None:
    """After Ctrl-C: collect the statistics the workers still send as they stop."""
    deadline = time.monotonic() + 5
    while readers and time.monotonic() < deadline:
        try:
            ready = wait_for(list(readers), timeout=0.1)
        except KeyboardInterrupt:
            continue
        for reader in ready:
            try:
                kind, _, payload = reader.recv()
            except (EOFError, OSError):
                del readers[reader]
                continue
            if kind == "stats":
                result.stats.merge(payload)


def _record(result, store, seen, finding: Finding, config: CampaignConfig, index: int,
            *, in_process: bool = True, case=None) -> None:
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
        from fuzz.findings import write_claimed

        files = write_claimed(config.db, store, finding, seed=config.seed, index=index,
                              shard="{}/{}".format(*config.shard))
        if files is None:  # claimed by another machine sharing the database: its to write
            result.duplicates += 1
            result.elsewhere.append((finding, config.db.claimant(finding.signature)))
            return
        if case is not None:
            from fuzz.corpus.guided import annotate_record

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
