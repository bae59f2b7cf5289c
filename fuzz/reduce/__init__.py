"""The test-case reducer: shrink a failing program until every smaller variant passes.

`deltas` proposes smaller variants of a case (function, input sets, pipeline); `reducer`
runs the delta passes to a fixed point, keeping only variants that verify and still fail
the same way. `agxfuzz reduce` (fuzz.commands.reduce) drives it from the command line.
"""

from fuzz.reduce.deltas import DELTAS, Case, Delta, delta_named
from fuzz.reduce.reducer import DeltaStats, Reducer, SameFailure, size_of

__all__ = [
    "DELTAS",
    "Case",
    "Delta",
    "DeltaStats",
    "Reducer",
    "SameFailure",
    "delta_named",
    "size_of",
]
