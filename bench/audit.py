"""Audit cost: wall time to prove every registered rewrite rule, and each rule's median and
worst solve time per query (z3's `check`, not building the query).

    python bench/audit.py [--timeout MS] [--repeat N]

Runs `oracles.smt.rules.prove_rule` on every rule of `agxir.passes.RULE_TABLES`, as
`agxfuzz audit` does; with --repeat, the wall time is the best of N runs and the per-rule
figures come from the best run of that rule.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.passes import RULE_TABLES  # noqa: E402
from oracles.smt.rules import DEFAULT_TIMEOUT_MS, prove_rule  # noqa: E402


def run_once(timeout_ms: int):
    proofs = []
    start = time.perf_counter()
    for pass_name, rules in RULE_TABLES.items():
        for rule in rules:
            proofs.append(prove_rule(rule, timeout_ms, pass_name))
    return time.perf_counter() - start, proofs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS")
    parser.add_argument("--repeat", type=int, default=1, metavar="N")
    args = parser.parse_args()
    runs = [run_once(args.timeout) for _ in range(max(1, args.repeat))]
    wall = min(seconds for seconds, _ in runs)
    best = {}
    for _, proofs in runs:
        for proof in proofs:
            key = (proof.pass_name, proof.rule)
            if key not in best or proof.seconds < best[key].seconds:
                best[key] = proof
    proofs = list(best.values())
    print(f"audit of {len(proofs)} rules in {len(RULE_TABLES)} passes, "
          f"z3 timeout {args.timeout} ms per query, best of {len(runs)}")
    print(f"{'pass':<24} {'rule':<16} {'verdict':<10} {'queries':>7} "
          f"{'median ms':>10} {'worst ms':>9} {'rule s':>7}")
    for p in proofs:
        print(f"{p.pass_name:<24} {p.rule:<16} {p.verdict:<10} {len(p.times_ms):>7} "
              f"{p.median_ms:>10.2f} {p.max_ms:>9.2f} {p.seconds:>7.2f}")
    medians = [p.median_ms for p in proofs]
    print(f"wall time, all rules: {wall:.2f} s")
    print(f"solve time per rule: median {statistics.median(medians):.2f} ms "
          f"(range {min(medians):.2f}-{max(medians):.2f}), worst query "
          f"{max(p.max_ms for p in proofs):.2f} ms")
    return 0 if all(p.verdict == "verified" for p in proofs) else 1


if __name__ == "__main__":
    sys.exit(main())
