"""The test-case reducer: shrink a failing program until every smaller variant passes.

`deltas` proposes smaller variants of a case (function, input sets, pipeline); `reducer`
runs the delta passes to a fixed point, keeping only variants that verify and still fail
the same way. `agxfuzz reduce` (fuzz.commands.reduce) drives it from the command line;
`finding` reduces a campaign's finding and gives the shape that makes two findings one bug.
"""

from fuzz.reduce.deltas import DELTAS, Case, Delta, delta_named
from fuzz.reduce.finding import change_shape, reduce_finding, reproducer_shape
from fuzz.reduce.reducer import DeltaStats, Reducer, SameFailure, size_of

__all__ = [
    "DELTAS",
    "Case",
    "Delta",
    "DeltaStats",
    "Reducer",
    "SameFailure",
    "change_shape",
    "delta_named",
    "reduce_finding",
    "reproducer_shape",
    "size_of",
]
