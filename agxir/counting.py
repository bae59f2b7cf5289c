"""Counts a pass makes while a caller listens: nested `Counter`s opened by a `with` block.

The rule matcher counts each rewrite by rule (`agxir.rewrite.counting_rule_hits`) and the
machine passes count the pressure paths they take (`agxir.machine.paths`), so the campaign
can report what the passes did without the passes knowing about the campaign. Outside any
open block nothing is counted; nested blocks count only in the innermost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager


class NestedCounters:
    """A stack of open Counters; `add` counts in the innermost, if any is open."""

    def __init__(self) -> None:
        self._open: list[Counter] = []

    @contextmanager
    def counting(self) -> Iterator[Counter]:
        counts: Counter = Counter()
        self._open.append(counts)
        try:
            yield counts
        finally:
            self._open.pop()

    def add(self, key: str, times: int = 1) -> None:
        if self._open and times:
            self._open[-1][key] += times
