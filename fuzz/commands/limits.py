"""The bounds on what one command may ask the interpreter for: buffer sizes, threads per
input set, input sets per run. Larger ones cost gigabytes and are refused up front with a
one-line error; `agxfuzz --max-buffer` and `--max-threads` raise them (fuzz/cli.py sets
them before a command runs). A module of its own, light to import: the command line reads
the defaults for its help text without loading the IR or numpy.
"""

from __future__ import annotations

from fuzz.commands.errors import UsageError


def set_max_interpreted_buffer(megabytes: int) -> None:
    global MAX_INTERPRETED_BUFFER
    MAX_INTERPRETED_BUFFER = megabytes << 20


# Every input set holds each buffer for every thread's view of memory: larger ones cost
# seconds and gigabytes per run, so they are refused up front with a clear message.
MAX_INTERPRETED_BUFFER = 64 << 20


# Threads per input set, and input sets per run: the interpreter's memory and time grow
# with both (100 million threads take gigabytes), so larger ones are refused up front.
MAX_THREADS = 1 << 16
MAX_SETS = 1024
THREADS_PER_RUN = 16  # all input sets together: at most this many times MAX_THREADS threads


def set_max_threads(threads: int) -> None:
    global MAX_THREADS
    MAX_THREADS = threads


def check_input_size(threads: int, sets: int, where: str) -> None:
    """UsageError (exit 2) for input sets over the bounds, `where` naming what gave them."""
    if threads > MAX_THREADS:
        raise UsageError(f"agxfuzz: {where}: {threads} threads per input set is over the limit "
                         f"of {MAX_THREADS} (agxfuzz --max-threads N raises it)")
    if sets > MAX_SETS:
        raise UsageError(f"agxfuzz: {where}: {sets} input sets is over the limit of {MAX_SETS}")
    if threads * sets > MAX_THREADS * THREADS_PER_RUN:
        raise UsageError(f"agxfuzz: {where}: {sets} input sets of {threads} threads are over "
                         f"the limit of {MAX_THREADS * THREADS_PER_RUN} threads in all "
                         "(agxfuzz --max-threads N raises it)")
