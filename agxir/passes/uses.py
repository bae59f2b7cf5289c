"""Use counts for the backward fusions (Mesa `agx_optimizer_backward`).

Mesa's backward pass fuses an instruction into its only use; before visiting a block it
records its successors' phi sources as uses, because a phi reads its source at the end of
the predecessor (FsatWithPhi). Here every source operand of every instruction counts, phi
sources included, so a value read by a phi on a back edge is never "single use" when
something else reads it too.
"""

from __future__ import annotations

from collections import Counter

from agxir.ir import Function, Value


def use_counts(fn: Function, phis: bool = True) -> Counter:
    """How many source operands read each value (phi sources counted unless `phis` is off)."""
    counts: Counter = Counter()
    for ins in fn.instructions():
        if ins.is_phi and not phis:
            continue
        for src in ins.srcs:
            if isinstance(src.ref, Value):
                counts[src.ref] += 1
    return counts


def single_use(counts: Counter, name: str):
    """A precondition: the bound operand `name` is read exactly once in the function."""
    return lambda b: counts[b[name].ref] == 1
