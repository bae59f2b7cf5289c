"""Audit cost: wall time to prove every registered rewrite rule, and each rule's median and
worst solve time per query (z3's `check`, not building the query).

    python bench/audit.py [--timeout MS] [--repeat N] [--jobs N] [--warm]

Proves every rule of `agxir.passes.RULE_TABLES` with `oracles.smt.audit_pool.prove_rules`
on N processes (default: every core), as `agxfuzz audit --no-cache` does: a cold run, the
proof cache unused. With --repeat, the wall time is the best of N runs and the per-rule
figures come from the best run of that rule. With --warm, the proofs then go into a fresh
proof cache and a second run is timed, as `agxfuzz audit` runs the second time on an
unchanged tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.passes import RULE_TABLES  # noqa: E402
from fuzz.campaign import default_jobs  # noqa: E402
from oracles.smt.audit_pool import prove_rules  # noqa: E402
from oracles.smt.proof_cache import ProofCache  # noqa: E402
from oracles.smt.rules import DEFAULT_TIMEOUT_MS  # noqa: E402

ITEMS = [(pass_name, rule) for pass_name, rules in RULE_TABLES.items() for rule in rules]


def run_once(timeout_ms: int, jobs: int, cache=None):
    start = time.perf_counter()
    proofs = prove_rules(ITEMS, timeout_ms, jobs=jobs, cache=cache)
    return time.perf_counter() - start, proofs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS")
    parser.add_argument("--repeat", type=int, default=1, metavar="N")
    parser.add_argument("--jobs", type=int, default=default_jobs(), metavar="N")
    parser.add_argument("--warm", action="store_true",
                        help="then time a second run answered by a fresh proof cache")
    args = parser.parse_args()
    runs = [run_once(args.timeout, args.jobs) for _ in range(max(1, args.repeat))]
    wall = min(seconds for seconds, _ in runs)
    best = {}
    for _, proofs in runs:
        for proof in proofs:
            key = (proof.pass_name, proof.rule)
            if key not in best or proof.seconds < best[key].seconds:
                best[key] = proof
    proofs = list(best.values())
    print(f"audit of {len(proofs)} rules in {len(RULE_TABLES)} passes, "
          f"z3 timeout {args.timeout} ms per query, {args.jobs} jobs, best of {len(runs)}, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'pass':<24} {'rule':<16} {'verdict':<10} {'queries':>7} "
          f"{'median ms':>10} {'worst ms':>9} {'rule s':>7}")
    for p in proofs:
        print(f"{p.pass_name:<24} {p.rule:<16} {p.verdict:<10} {len(p.times_ms):>7} "
              f"{p.median_ms:>10.2f} {p.max_ms:>9.2f} {p.seconds:>7.2f}")
    medians = [p.median_ms for p in proofs]
    print(f"wall time, all rules (cold, no proof cache): {wall:.2f} s")
    worst = max(proofs, key=lambda p: p.max_ms)
    print(f"slowest query: {worst.pass_name} / {worst.rule}, {worst.max_ms:.0f} ms, "
          f"{args.timeout / max(worst.max_ms, 1e-9):.1f}x below the timeout")
    if args.warm:
        with tempfile.TemporaryDirectory() as directory:
            cache = ProofCache(directory)
            run_once(args.timeout, args.jobs, cache)
            seconds, again = run_once(args.timeout, args.jobs, ProofCache(directory))
        cached = sum(p.cached for p in again)
        print(f"warm run (proof cache filled by the run before): {seconds:.2f} s, "
              f"{cached} of {len(again)} rules from the cache")
    print(f"solve time per rule: median {statistics.median(medians):.2f} ms "
          f"(range {min(medians):.2f}-{max(medians):.2f}), worst query "
          f"{max(p.max_ms for p in proofs):.2f} ms")
    return 0 if all(p.verdict == "verified" for p in proofs) else 1


if __name__ == "__main__":
    sys.exit(main())
