"""Which paths of the machine passes a run took: the counters a campaign reads to say how
often its programs reach what the passes do under pressure.

The passes call `reached(path)` where a path of interest runs: the allocator evicting
values (`eviction`, with `eviction-late-kill` and `eviction-repack` for its fallbacks) or
fixing up a block's entry map on an edge (`entry-fixup`); copy lowering breaking a cycle of
three or more halves (`cycle`), exchanging two (`swap`) or moving an immediate
(`immediate`); control-flow lowering or out-of-SSA splitting a critical edge
(`edge-split`). Counts go to the innermost `counting_paths()` block open, as
`agxir.rewrite.counting_rule_hits` counts rules; with none open, `reached` does nothing, so
the passes cost the same outside a campaign. This module knows nothing of the campaign.
"""

from __future__ import annotations

from collections import Counter
from contextlib import AbstractContextManager

from agxir.counting import NestedCounters

__all__ = ["PATHS", "counting_paths", "reached"]

# The paths a campaign summary reports, in its order, with the words it prints.
PATHS: dict[str, str] = {
    "eviction": "evictions",
    "entry-fixup": "entry fix-ups",
    "cycle": "cycle breaks",
    "swap": "swaps",
    "immediate": "immediate copies",
    "edge-split": "edge splits",
}

_PATHS = NestedCounters()


def counting_paths() -> AbstractContextManager[Counter]:
    """Within the block, the returned Counter counts each path the machine passes take."""
    return _PATHS.counting()


def reached(path: str, times: int = 1) -> None:
    """Count `path` `times` in the innermost open counter (none open: nothing)."""
    _PATHS.add(path, times)
