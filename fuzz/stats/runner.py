"""The corpus of a stats run and the worker processes that compile it.

A generated corpus is the first N programs of seed S that control-flow lowering can
structure (candidate i is built from `fuzz.generate.cases.program_seed(S, i)` as a campaign
builds it, and named `p<i>`); a program `lower-cf` declines (an unstructurable CFG) is
skipped and counted, so the same `--programs N --seed S` always gives the same corpus. A
directory corpus is every `.agx` file in it, named by its stem (one `lower-cf` declines is
listed, not compared).

Workers are forked processes (`fuzz.processes.become_worker`: they die with the run and
leave Ctrl-C to it) that take chunks of candidates in order and return, per program, its
SSA text and per pipeline its `Metrics` or why the pipeline failed on it (a pass that
raises, or runs past `PIPELINE_SECONDS`). The parent keeps results in corpus order, so a
run's numbers do not depend on `--jobs`.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from agxir.machine.lower_cf import structurable
from agxir.text import parse_function, print_function
from fuzz.generate import ChoiceSource, Features, generate_program
from fuzz.generate.cases import program_seed
from fuzz.processes import become_worker
from fuzz.stats.metrics import Metrics
from fuzz.stats.sharing import measure_all

__all__ = ["Compiled", "Declined", "compile_corpus", "CHUNK", "PIPELINE_SECONDS"]

CHUNK = 20  # candidates per task
PIPELINE_SECONDS = 20.0  # one pipeline on one program; past it the pipeline failed on it
SIZE = 50  # instructions per generated program, as the campaign's default


@dataclass
class Compiled:
    name: str
    text: str  # the SSA program
    results: dict[str, Metrics | str]  # pipeline key -> metrics, or why it failed


@dataclass
class Declined:
    name: str
    reason: str


_PIPELINES: dict = {}  # key -> passes; set in the parent before workers are forked


class _Timeout(TimeoutError):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"ran past {PIPELINE_SECONDS:g} s")


@contextmanager
def _time_limit(key):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, PIPELINE_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _measure(fn) -> dict[str, Metrics | str]:
    return measure_all(fn, _PIPELINES, _time_limit)


def _one(name: str, fn) -> Compiled | Declined:
    reason = structurable(fn)
    if reason is not None:
        return Declined(name, reason)
    return Compiled(name, print_function(fn), _measure(fn))


def _task(task) -> list[Compiled | Declined]:
    kind, payload = task
    out = []
    if kind == "generate":
        seed, start, stop = payload
        for index in range(start, stop):
            source = ChoiceSource.from_seed(program_seed(seed, index))
            fn = generate_program(source, Features.from_source(source), size=SIZE)
            out.append(_one(f"p{index:05d}", fn))
    else:
        for name, text in payload:
            out.append(_one(name, parse_function(text, filename=f"{name}.agx")))
    return out


def _init_worker() -> None:
    become_worker(None)


def _tasks_generated(seed: int, count: int) -> Iterator:
    limit = 2 * count + 100  # a corpus that cannot be found by then is reported short
    for start in range(0, limit, CHUNK):
        yield ("generate", (seed, start, min(start + CHUNK, limit)))


def _tasks_files(files: Sequence[tuple[str, str]]) -> Iterator:
    for start in range(0, len(files), CHUNK):
        yield ("files", list(files[start:start + CHUNK]))


def compile_corpus(pipelines: dict, *, jobs: int, seed: int | None = None,
                   count: int | None = None, files: Sequence[tuple[str, str]] | None = None
                   ) -> tuple[list[Compiled], list[Declined]]:
    """Compile the corpus (generated from `seed` until `count` programs, or `files` as
    (name, text)) with every pipeline (key -> passes)."""
    global _PIPELINES
    _PIPELINES = dict(pipelines)
    tasks: Iterable = (_tasks_generated(seed, count) if files is None else _tasks_files(files))
    wanted = count if files is None else len(files)
    compiled: list[Compiled] = []
    declined: list[Declined] = []

    def take(results) -> bool:
        for item in results:
            if isinstance(item, Declined):
                declined.append(item)
            elif len(compiled) < wanted:
                compiled.append(item)
            if files is None and len(compiled) >= wanted:
                return True
        return False

    if jobs <= 1:
        for task in tasks:
            if take(_task(task)):
                break
        return compiled, declined
    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_init_worker)
    try:
        for results in pool.imap(_task, tasks):
            if take(results):
                break
    finally:
        pool.terminate()
        pool.join()
    return compiled, declined
