"""The campaign: generate programs from a seed, check each under every pipeline, on all cores.

Program i of a run with seed S is built from a seed derived from (S, i), so `--seed S`
replays a run and any one program can be rebuilt on its own. Workers are forked processes
that take every J-th program; the parent gathers statistics, prints progress and writes each
new finding (deduplicated by signature) atomically.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import queue
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fuzz.findings import FindingStore
from fuzz.harness import Finding, Harness, Stats
from fuzz.passes_under_test import PassUnderTest

REPORT_EVERY = 0.5  # seconds between a worker's statistics messages


def program_seed(seed: int, index: int) -> int:
    digest = hashlib.sha256(f"agxfuzz:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


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
    reduce_seconds: float = 10.0  # per new finding, before it is written; 0: write as found
    liveness_analysis: object = None  # None: agxir.liveness.Liveness (the zoo swaps it)
    address_heavy: bool = False  # programs whose memory accesses use address math shapes

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
    first_finding_seconds: float | None = None  # when the first finding arrived
    first_finding_program: int | None = None  # how many programs it took (index + 1)

    @property
    def programs_per_second(self) -> float:
        return self.stats.programs / self.seconds if self.seconds else 0.0


def build_case(seed: int, index: int, config: CampaignConfig):
    from fuzz.generate import ChoiceSource, Features, generate_inputs, generate_program

    source = ChoiceSource.from_seed(program_seed(seed, index))
    features = Features.from_source(source, address_heavy=config.address_heavy)
    fn = generate_program(source, features, size=config.size)
    inputs = generate_inputs(fn, source, threads=config.threads, sets=config.sets)
    return fn, inputs


def _work(job: int, config: CampaignConfig, stop_at: float | None, messages, stop) -> None:
    stats = Stats()
    last_report = time.monotonic()
    index = job
    try:
        while config.examples is None or index < config.examples:
            if stop.is_set() or (stop_at is not None and time.monotonic() >= stop_at):
                break
            fn, inputs = build_case(config.seed, index, config)
            harness = Harness(inputs, **config.harness_options())
            findings = harness.check(fn, config.pipelines)
            stats.merge(harness.stats)
            for finding in findings:
                messages.put(("finding", index, finding))
            index += config.jobs
            if time.monotonic() - last_report > REPORT_EVERY:
                messages.put(("stats", job, stats))
                stats = Stats()
                last_report = time.monotonic()
    except Exception as error:  # a harness bug: report it with what replays it
        messages.put(("error", job, f"program {index}: {type(error).__name__}: {error}"))
    messages.put(("stats", job, stats))
    messages.put(("done", job, None))


def run_campaign(
    config: CampaignConfig,
    store: FindingStore | None,
    on_progress: Callable[[Stats, float, int], None] | None = None,
) -> CampaignResult:
    started = time.monotonic()
    stop_at = started + config.seconds if config.seconds is not None else None
    context = multiprocessing.get_context("fork")
    messages = context.Queue()
    stop = context.Event()
    workers = [
        context.Process(target=_work, args=(job, config, stop_at, messages, stop), daemon=True)
        for job in range(config.jobs)
    ]
    for worker in workers:
        worker.start()
    result = CampaignResult(Stats(), 0.0)
    seen: set[str] = set()
    running = len(workers)
    last_progress = time.monotonic()
    try:
        while running:
            try:
                kind, who, payload = messages.get(timeout=0.2)
            except queue.Empty:
                if not any(w.is_alive() for w in workers):
                    break
                kind = None
            if kind == "stats":
                result.stats.merge(payload)
            elif kind == "finding":
                if result.first_finding_seconds is None:
                    result.first_finding_seconds = time.monotonic() - started
                    result.first_finding_program = who + 1
                if config.fail_fast:
                    # Stop the workers before reducing; what they found meanwhile is counted,
                    # not reduced: a fail-fast run reports its first finding.
                    stop.set()
                    if result.findings:
                        result.duplicates += 1
                        continue
                _record(result, store, seen, payload, config, who)
            elif kind == "error":
                result.internal_error = payload
            elif kind == "done":
                running -= 1
            now = time.monotonic()
            if on_progress and now - last_progress >= 1.0:
                on_progress(result.stats, now - started, len(result.findings))
                last_progress = now
    finally:
        for worker in workers:
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()
    result.seconds = time.monotonic() - started
    return result


def _record(result, store, seen, finding: Finding, config: CampaignConfig, index: int) -> None:
    if finding.signature in seen:
        result.duplicates += 1
        return
    seen.add(finding.signature)
    if config.reduce_seconds > 0:
        finding = reduce_finding(finding, config, index)
    files = store.write(finding, seed=config.seed, index=index) if store else None
    result.findings.append((finding, files))


def reduce_finding(finding: Finding, config: CampaignConfig, index: int) -> Finding:
    """The finding, shrunk by the reducer within `config.reduce_seconds` to a program that
    fails the same way (same pass, oracle and signature)."""
    from agxir.text import print_function
    from fuzz.reduce import Case, Reducer, SameFailure

    fn, inputs = build_case(config.seed, index, config)
    units = {unit.name: unit for pipeline in config.pipelines for unit in pipeline}
    pipeline = tuple(units[name] for name in finding.pipeline)
    options = config.harness_options()
    test = SameFailure(finding, pass_timeout=options.pop("pass_timeout"), harness_options=options)
    reducer = Reducer(Case(fn, tuple(inputs), pipeline), test, seconds=config.reduce_seconds)
    best = reducer.run()
    reduced = reducer.finding
    if reduced is None:  # could not reproduce in a fresh harness: keep the original
        return finding
    return Finding(
        reduced.pass_name,
        reduced.oracle,
        reduced.message,
        tuple(unit.name for unit in best.pipeline),
        print_function(best.fn),
        reduced.input_set,
    )


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
