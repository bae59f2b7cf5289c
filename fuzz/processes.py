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
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: whatever the pass does to this process stays here
        try:
            os.close(reader)
            become_worker(memory_mb)
            data = pickle.dumps(function(*args))
            with os.fdopen(writer, "wb") as out:
                out.write(data)
        finally:
            os._exit(0)
    os.close(writer)
    chunks = []
    try:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([reader], [], [], left)
            if not ready:
                break
            chunk = os.read(reader, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reader)
        reap(pid)
    try:
        return pickle.loads(b"".join(chunks)) if chunks else None
    except Exception:  # cut short: the child died while writing
        return None


def dies(run: Callable[[], object], *, seconds: float, memory_mb: int | None = None):
    """Run `run()` in a forked child: None if it returned, else how the child died, or
    "hung" if it was still running after `seconds`."""
    pid = os.fork()
    if pid == 0:
        try:
            become_worker(memory_mb)
            run()
        finally:
            os._exit(0)
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return None if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else status
        if time.monotonic() > deadline:
            reap(pid)
            return "hung"
        time.sleep(0.01)


def reap(pid: int) -> None:
    """Kill a child and what it started (its process group), and wait for it."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


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
