"""Compiling one program with many pipelines that share most of their passes, without
running the shared work twice: what keeps `agxfuzz stats` within its time.

Two savings, both exact (the result equals `fuzz.stats.metrics.compile_and_measure` per
pipeline, which the tests hold it to):

* Shared prefixes. When a later pipeline starts with the same passes as an earlier one
  (the same SSA optimizer before a different machine route, the whole Mesa pipeline
  before a post-RA pass), the earlier one keeps a copy of the function at the end of the
  common prefix and the later one starts there.
* Passes that change nothing. A pass keeps the `Pass` contract: it returns False only when
  it left the function untouched. The function after a run of deterministic passes is
  therefore named by the list of the passes that changed it (the `key`), and two
  pipelines whose keys agree at some point with the same passes still to run end in the
  same result: heuristic 1 and heuristic 4 on a program with no select to fuse are
  compiled once. (A pass that broke the contract would corrupt this saving; the campaign's
  unchanged-means-untouched invariant is where such a pass is caught.)
"""

from __future__ import annotations

from collections.abc import Callable

from agxir.ir import Function, clone_function
from fuzz.stats.metrics import ALLOCATORS, CompileFailed, Metrics, measured, pressure_before

__all__ = ["measure_all"]


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def measure_all(fn: Function, pipelines: dict, guard: Callable | None = None
                ) -> dict[str, Metrics | str]:
    """Per pipeline key (pipelines: key -> passes), the metrics of SSA program `fn`
    compiled by it, or why it failed (`CompileFailed.reason`). `guard(key)`, when given, is
    a context manager around each pipeline's own work (a time limit raising TimeoutError)."""
    order = list(pipelines)
    names = {k: tuple(p.name for p in pipelines[k]) for k in order}
    keep: dict[str, set[int]] = {k: set() for k in order}
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            shared = _common(names[a], names[b])
            if shared:
                keep[a].add(shared)
    snapshots: dict[tuple[str, ...], tuple[Function, tuple, int | None]] = {}
    memo: dict[tuple[tuple, tuple[str, ...]], Metrics | str] = {}
    results: dict[str, Metrics | str] = {}
    for i, k in enumerate(order):
        later = [names[j] for j in order[i + 1:]]
        try:
            if guard is None:
                results[k] = _run(fn, pipelines[k], names[k], keep[k], snapshots, memo, later)
            else:
                with guard(k):
                    results[k] = _run(fn, pipelines[k], names[k], keep[k], snapshots, memo,
                                      later)
        except TimeoutError as error:  # the guard's limit, outside any one pass
            results[k] = f"pipeline: {error}"
    return results


def _run(fn, steps, nm, keep, snapshots, memo, later):
    start = next((n for n in range(len(nm), 0, -1) if nm[:n] in snapshots), 0)
    if start:
        prefix = nm[:start]
        saved, key, pressure = snapshots[prefix]
        if any(other[:start] == prefix for other in later):
            state = clone_function(saved)
        else:  # no later pipeline starts with this prefix: take the copy itself
            state = saved
            del snapshots[prefix]
    else:
        state, key, pressure = clone_function(fn), (), None
    trail = []
    result = None
    try:
        for pos in range(start, len(steps)):
            known = memo.get((key, nm[pos:]))
            if known is not None:
                result = known
                break
            trail.append((key, pos))
            step = steps[pos]
            if step.name in ALLOCATORS:
                pressure = pressure_before(step.name, state)
            try:
                changed = step.run(state)
            except Exception as error:
                raise CompileFailed(step.name, error) from None
            if changed:
                key = (*key, step.name)
            if pos + 1 in keep:
                snapshots[nm[:pos + 1]] = (clone_function(state), key, pressure)
        else:
            result = measured(state, pressure)
    except CompileFailed as failure:
        result = failure.reason
    for seen, pos in trail:
        memo[(seen, nm[pos:])] = result
    return result
