"""What keeps a pass under test from taking the campaign down with it, or hiding in it.

Workers die with the campaign and ignore Ctrl-C; they run under an address-space limit;
each pass run is stamped in shared memory (which pass, since when) so the campaign can tell
a pass that defeated its in-process deadline and kill the worker. Anything that re-runs a
pass in the campaign's own process (reduction, deduplication, finding which step killed a
worker) does it in a forked child with a time limit instead: whatever the pass does to that
process, and however long it hangs, stays there.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable, Sequence

from fuzz.passes_under_test import PassUnderTest

STEPS_PER_PIPELINE = 1000  # a stamp is pipeline * STEPS_PER_PIPELINE + step


def die_with_parent() -> None:
    """Linux: the kernel kills this process when its parent dies (SIGKILL of the campaign
    included), so no worker outlives its run."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


def limit_memory(megabytes: int | None) -> None:
    if megabytes:
        import resource

        limit = megabytes << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


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

        return PassUnderTest(unit.name, run, unit.flag)

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
