"""`shallow_stack()`: run a block of a test under a low recursion limit, so that code which
recurses once per loop, block or instruction of a program fails on a deep program quickly
(RecursionError) instead of needing a program deeper than Python's default limit."""

from __future__ import annotations

import inspect
import sys
from contextlib import contextmanager


@contextmanager
def shallow_stack(frames: int = 120):
    """Allow only `frames` more Python frames than the caller has now."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)
