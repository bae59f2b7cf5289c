"""Proving many rules at once: over all cores, with the proof cache.

`prove_rules(items, timeout_ms, jobs=..., cache=..., report=...)` proves every (pass name,
rule) of `items` and returns their `RuleProof`s in order:

* a rule whose proof is in the cache (`oracles.smt.proof_cache`, when `cache` is given) is
  taken from it (`RuleProof.cached`), without enumerating its instances;
* the others run on `jobs` worker processes, one rule per task, the most expensive first
  when the cache remembers how long each took last time (so no long rule is left for the
  end). Workers are forked, so they inherit the rules (preconditions are functions, which
  do not pickle) and each makes its own z3 context, solving all of a rule's instances in it.

A rule is the unit of work, not one of its skeleton groups: a rule's instances are
deduplicated across its groups (`agxir.rewrite.instances`), and the groups are many and
tiny (768 for branch-cmp's icmp rule, 144 distinct instances), so proving groups apart
either proves the same instance several times or enumerates the earlier groups again in
every shard.

`report(proof)` is called for each rule as soon as it and every rule before it are done,
so a table can be printed in order while the rest is still being proved. With `jobs=1`
(or a single rule) everything runs in this process, rule by rule.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence

from oracles.smt.proof_cache import rule_key
from oracles.smt.rules import RuleProof, prove_rule

_TASKS: list = []  # (pass name, rule, timeout), inherited by the forked workers


def _prove_task(number: int):
    pass_name, rule, timeout_ms = _TASKS[number]
    return number, prove_rule(rule, timeout_ms, pass_name)


def _from_cache(pass_name: str, rule_name: str, entry: dict):
    return RuleProof(pass_name, rule_name, "verified", instances=int(entry["instances"]),
                     times_ms=[float(t) for t in entry["times_ms"]],
                     seconds=float(entry["seconds"]), cached=True)


def prove_rules(items: Sequence[tuple[str, object]], timeout_ms: int, *, jobs: int = 1,
                cache=None, report: Callable | None = None) -> list:
    """See the module docstring. `cache`: a ProofCache or None."""
    results: list = [None] * len(items)
    keys = [rule_key(pass_name, rule) if cache is not None else None for pass_name, rule in items]
    todo = []
    for position, (pass_name, rule) in enumerate(items):
        entry = cache.get(keys[position]) if cache is not None else None
        if entry is not None:
            results[position] = _from_cache(pass_name, rule.name, entry)
        else:
            todo.append(position)
    shown = 0

    def report_ready() -> None:  # every finished rule not yet reported, in order
        nonlocal shown
        while shown < len(results) and results[shown] is not None:
            if report is not None:
                report(results[shown])
            shown += 1

    def finished(position: int, proof) -> None:
        results[position] = proof
        if cache is not None:
            cache.put(keys[position], proof, proof.opcodes)
        report_ready()

    report_ready()  # the leading cached rules
    if jobs <= 1 or len(todo) <= 1:
        for position in todo:
            pass_name, rule = items[position]
            finished(position, prove_rule(rule, timeout_ms, pass_name))
        return results
    timings = cache.timings() if cache is not None else {}
    _run_pool(items, todo, timeout_ms, jobs, timings, finished)
    if cache is not None:
        cache.save_timings(timings)
    return results


def _timing_name(pass_name: str, rule_name: str) -> str:
    return f"{pass_name}/{rule_name}"


def _run_pool(items, todo, timeout_ms, jobs, timings, finished):
    global _TASKS
    _TASKS = [(items[p][0], items[p][1], timeout_ms) for p in todo]
    order = sorted(range(len(todo)), key=lambda n: -float(timings.get(
        _timing_name(_TASKS[n][0], _TASKS[n][1].name), 1.0)))
    context = multiprocessing.get_context("fork")
    pool = context.Pool(min(jobs, len(todo)))
    try:
        for number, proof in pool.imap_unordered(_prove_task, order, chunksize=1):
            timings[_timing_name(proof.pass_name, proof.rule)] = round(proof.seconds, 3)
            finished(todo[number], proof)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        _TASKS = []
