"""What keeps a pass under test from taking the campaign down with it, or hiding in it.

Workers die with the campaign and ignore Ctrl-C; each pass they run is under an
address-space limit relative to what its process holds when it starts (`--pass-memory`,
`pass_memory_limit`); each pass run is stamped in shared memory (which pass, since when) so
the campaign can tell a pass that defeated its in-process deadline and kill the worker.
Anything that re-runs a pass in the campaign's own process (reduction, deduplication,
finding which step killed a worker) does it in a forked child with a time limit instead:
whatever the pass does to that process, and however long it hangs, stays there.
`check_supervised` is one program checked so, the way `check`, `repro`, `reduce` (each
candidate) and the report's replay of a death run it; `death_verdict` tells a death the
memory limit caused from a crash of the pass.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import re
import resource
import select
import signal
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import replace

from agxir.text import print_function
from fuzz.finding import Finding
from fuzz.pass_unit import PassUnderTest

STEPS_PER_PIPELINE = 1000  # a stamp is pipeline * STEPS_PER_PIPELINE + step


def die_with_parent() -> None:
    """Linux: the kernel kills this process when its parent dies (SIGKILL of the campaign
    included), so no worker outlives its run."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


PASS_MEMORY_FLOOR_MB = 32  # the smallest --pass-memory: below it no pass can run at all
_pass_budget = 0  # bytes a pass may add to its process's address space (0: no limit)


class PassMemoryLimit(MemoryError):
    """A pass ran past its memory limit: the harness records a "memory-limit" finding."""


def limit_memory(megabytes: int | None) -> None:
    """Every pass this process runs from now on may grow its address space by `megabytes`
    beyond what the process holds when the pass starts (`pass_memory_limit`): the limit is
    the pass's, never the interpreter's, numpy's or the oracles' start-up and working set."""
    global _pass_budget
    _pass_budget = (megabytes or 0) << 20


def address_space() -> int:
    """This process's address space in bytes (VmSize)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def pass_memory_limit():
    """Around one pass run: RLIMIT_AS lowered to the address space now plus the budget,
    restored after it; a MemoryError meanwhile is the pass's `PassMemoryLimit`."""
    budget = _pass_budget
    if not budget:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = address_space() + budget
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    except MemoryError:
        raise PassMemoryLimit(f"the pass went past its memory limit of {budget >> 20} MB "
                              "(--pass-memory)") from None
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def become_worker(memory_mb: int | None) -> None:
    """What every process that runs passes for the campaign does first."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the campaign's to handle
    try:
        os.setpgid(0, 0)  # its own group: what a pass forks is killed with it at the end
    except OSError:
        pass
    limit_memory(memory_mb)


def stamped(pipelines: Sequence[Sequence[PassUnderTest]], slot: int, where, since):
    """The pipelines, each pass writing which one it is (`where[slot]`) and since when
    (`since[slot]`, 0 when no pass runs) to shared memory before it runs."""

    def wrap(unit: PassUnderTest, stamp: int) -> PassUnderTest:
        def run(fn):
            where[slot] = stamp
            since[slot] = time.monotonic()
            try:
                return unit.run(fn)
            finally:
                since[slot] = 0.0

        return replace(unit, run=run)  # its name, flag and contract

    return [
        [wrap(unit, p * STEPS_PER_PIPELINE + s) for s, unit in enumerate(pipeline)]
        for p, pipeline in enumerate(pipelines)
    ]


def unstamp(stamp: int) -> tuple[int, int]:
    """(pipeline, step) of a stamp."""
    return divmod(stamp, STEPS_PER_PIPELINE)


def in_child(function: Callable, *args, seconds: float, memory_mb: int | None = None):
    """`function(*args)` in a forked child that ignores Ctrl-C (the caller handles it):
    its result, or None if the child died, hung past `seconds`, or returned nothing."""
    kind, value = run_in_child(function, *args, seconds=seconds, memory_mb=memory_mb)
    return value if kind == "ok" else None


def run_in_child(function: Callable, *args, seconds: float, memory_mb: int | None = None,
                 stuck: Callable[[], bool] | None = None):
    """`function(*args)` in a forked child: ("ok", its result), ("raised", "Type: message"),
    ("died", wait status) or ("hung", None) if it ran past `seconds` or `stuck()` (asked
    every 0.2 s) said it is stuck."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: whatever the pass does to this process stays here
        try:
            os.close(reader)
            become_worker(memory_mb)
            try:
                outcome = ("ok", function(*args))
            except BaseException as error:
                outcome = ("raised", f"{type(error).__name__}: {error}")
            data = pickle.dumps(outcome)
            with os.fdopen(writer, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(writer)
    chunks, hung = [], True
    try:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([reader], [], [], min(left, 0.2))
            if not ready:
                if stuck is not None and stuck():
                    break
                continue
            chunk = os.read(reader, 1 << 16)
            if not chunk:
                hung = False
                break
            chunks.append(chunk)
    finally:
        os.close(reader)
        status = reap(pid, kill=hung)
    if hung:
        return "hung", None
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # nothing, or cut short: the child died
        return "died", status


def dies(run: Callable[[], object], *, seconds: float, memory_mb: int | None = None):
    """Run `run()` in a forked child: None if it returned (or raised), else how the child
    died (a wait status; `os._exit(0)` is a death too), or "hung" past `seconds`."""
    kind, value = run_in_child(run, seconds=seconds, memory_mb=memory_mb)
    return {"ok": None, "raised": None, "died": value, "hung": "hung"}[kind]


def reap(pid: int, *, kill: bool = True) -> int:
    """Wait for a child (killing it first unless `kill` is false) and kill what it left in
    its process group; its wait status."""
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        status = os.waitpid(pid, 0)[1]
    except ChildProcessError:
        status = 0
    kill_group(pid)
    return status


def kill_group(pid: int) -> None:
    """Kill whatever is left in a finished worker's process group (what a pass forked)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def describe_death(status) -> str:
    if status == "hung":
        return "hung past its deadline"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with status {os.WEXITSTATUS(status)}"


# --- one program checked in a supervised child ------------------------------------------------

HANG_GRACE = 20.0  # seconds a pass may overrun its deadline before its process is killed
# The wall-clock backstop of the harness's pass deadline, in multiples of its CPU limit:
# what stops a pass that sleeps or blocks (waits on a pipe, a lock, a child process), which
# spends no CPU (fuzz.harness.deadline).
WALL_BACKSTOP = 6


def watchdog_seconds(pass_timeout: float, grace: float = HANG_GRACE) -> float:
    """How long a step may run, by the wall clock, before its process is killed as hung:
    past the deadline's own wall-clock backstop, so a slow pass on a loaded machine meets
    its CPU deadline (a timeout finding the load cannot cause) before any watchdog."""
    return pass_timeout * WALL_BACKSTOP + grace
MEMORY_RECHECK = 8  # a death under --pass-memory is re-run with this many times the budget


class HarnessError(Exception):
    """The harness itself raised in the supervised child: a bug of ours, not a finding."""


def death_message(status) -> str:
    return f"the pass took its process down ({describe_death(status)})"


def death_verdict(run: Callable[[], object], status, *, seconds: float,
                  memory_mb: int | None) -> tuple[str, str]:
    """(oracle, message) for a pipeline prefix whose child died with `status`: "crash",
    unless it died of a signal under a memory budget and runs without dying when given
    MEMORY_RECHECK times that budget: then it is the limit that killed it, "memory-limit"
    (C code that cannot allocate dies of SIGSEGV or SIGABRT instead of raising
    MemoryError), never a crash of the pass."""
    if memory_mb and status != "hung" and os.WIFSIGNALED(status):
        if dies(run, seconds=seconds, memory_mb=memory_mb * MEMORY_RECHECK) is None:
            return "memory-limit", (f"the pass took its process down ({describe_death(status)}) "
                                    f"under its memory limit of {memory_mb} MB (--pass-memory) "
                                    "and runs with more")
    return ("timeout" if status == "hung" else "crash"), death_message(status)


def check_supervised(harness, fn, pipelines, *, memory_mb: int | None,
                     hang_grace: float = HANG_GRACE) -> list:
    """`harness.check(fn, pipelines)` in a forked child under the worker's limits (time,
    `memory_mb` per pass, a stamp per pass), as a campaign worker runs it: a pass that
    exits, kills its process, defeats its deadline or outgrows its memory is a finding
    (found by re-running each pipeline prefix in a fresh child), never the caller's death.
    Raises HarnessError when the harness itself raised."""
    grace = watchdog_seconds(harness.pass_timeout, hang_grace)

    def bound(steps: int) -> float:
        return grace * steps + 600

    where = multiprocessing.Array("q", 1, lock=False)
    since = multiprocessing.Array("d", 1, lock=False)

    def stuck() -> bool:
        return bool(since[0]) and time.monotonic() - since[0] > grace

    def check_counted(fn, pipelines):
        # the child's counts (inconclusive steps, declines) come back with its findings,
        # so the caller can say what was and was not judged
        harness.stats = type(harness.stats)()
        return harness.check(fn, pipelines), harness.stats

    steps = sum(len(pipeline) for pipeline in pipelines)
    kind, value = run_in_child(check_counted, fn, stamped(pipelines, 0, where, since),
                               seconds=bound(steps), stuck=stuck, memory_mb=memory_mb)
    if kind == "ok":
        findings, counted = value
        harness.stats.merge(counted)
        return findings
    if kind == "raised":
        raise HarnessError(value)
    text = print_function(fn)
    first = harness.input_sets[0] if harness.input_sets else None
    if kind == "hung" and since[0]:
        number, step = unstamp(where[0])
        names = tuple(unit.name for unit in pipelines[number][: step + 1])
        message = (f"the pass ran longer than {harness.pass_timeout:g} s and did not stop at "
                   f"its deadline: killed after {grace:g} s")
        return [Finding(names[-1], "timeout", message, names, text, first)]
    for pipeline in pipelines:
        for length in range(1, len(pipeline) + 1):
            prefix = list(pipeline[:length])

            def run(prefix=prefix):
                return harness.check(fn, [prefix])

            status = dies(run, seconds=bound(length), memory_mb=memory_mb)
            if status is not None:
                names = tuple(step.name for step in prefix)
                oracle, message = death_verdict(run, status, seconds=bound(length),
                                                memory_mb=memory_mb)
                return [Finding(names[-1], oracle, message, names, text, first)]
    names = tuple(step.name for step in pipelines[0]) if pipelines else ()
    how = describe_death(value if kind == "died" else "hung")
    message = f"the check's process {how}; no pipeline alone does"
    return [Finding(names[-1] if names else "(input)", "crash", message, names, text)]


def recorded_memory_limit(oracle: str, message: str) -> int | None:
    """The --pass-memory a memory-limit finding was found under (its message names it),
    which its replay needs too; None for any other finding."""
    found = re.search(r"memory limit of (\d+) MB", message) if oracle == "memory-limit" else None
    return int(found.group(1)) if found else None
