"""NIR rule audit figures: instances per verdict and wall time for a nir_algebraic rule file.

    python bench/nir_audit.py FILE [--integer-only] [--timeout MS] [--sizes 8,16,32,64]
                              [--jobs N] [--json OUT]

FILE is a Mesa rule file such as src/asahi/compiler/agx_nir_algebraic.py or
src/compiler/nir/nir_opt_algebraic.py (read from a Mesa checkout; the project ships none).
Every instance is proved as `agxfuzz audit --nir` proves it (`oracles.smt.nir.prove_rule`).
Prints the instance counts per verdict for all rules and for integer rules (no float-typed
opcode), the rules per list, the commonest reasons for unsupported instances, the slowest
instances and the wall time. With --integer-only, float rules are not proved at all (the
integer subset's figures); --jobs N proves rules in N processes; --json OUT writes every
instance (verdict, reason, counterexample values and replay) for the docs' explanations.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.nir import BadRule, is_float_rule, load_rule_file  # noqa: E402
from oracles.smt.nir import VERDICTS, prove_rule  # noqa: E402


def _prove(job):
    rule, timeout_ms, sizes = job
    return prove_rule(rule, timeout_ms, sizes)


def _line(title: str, results) -> str:
    counts = Counter(r.verdict for r in results)
    decided = counts["verified"] + counts["counterexample"]
    return (f"{title:<16} {len(results):>6} instances: "
            + ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
            + f" ({decided} decided)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--integer-only", action="store_true")
    parser.add_argument("--timeout", type=int, default=2000, metavar="MS")
    parser.add_argument("--sizes", default="8,16,32,64")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    loaded = load_rule_file(args.file)
    rules = [r for r in loaded.rules()
             if not (args.integer_only and (isinstance(r, BadRule) or is_float_rule(r)))]
    start = time.perf_counter()
    jobs = [(rule, args.timeout, sizes) for rule in rules]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            per_rule = list(pool.map(_prove, jobs, chunksize=8))
    else:
        per_rule = [_prove(job) for job in jobs]
    wall = time.perf_counter() - start
    results = [r for group in per_rule for r in group]
    integer = [r for r in results if not r.float_rule]
    print(f"nir audit bench: {Path(args.file).name}: {len(rules)} rules"
          f"{' (integer rules only)' if args.integer_only else ''}, sizes {args.sizes}, "
          f"z3 timeout {args.timeout} ms, {args.jobs} job(s)")
    print(_line("all rules", results))
    print(_line("integer rules", integer))
    print(f"integer rules: {sum(1 for r in rules if not isinstance(r, BadRule) and not is_float_rule(r))}")
    per_list = Counter(r.list_name for r in results)
    print("instances per list: " + ", ".join(f"{k} {v}" for k, v in per_list.items()))
    reasons = Counter(r.reason for r in results if r.verdict == "unsupported")
    if reasons:
        print("commonest unsupported reasons:")
        for reason, count in reasons.most_common(8):
            print(f"  {count:>5}  {reason}")
    fallback = sum(r.encoding == "integers" for r in results)
    print(f"decided by the integer encoding after a bit-vector timeout: {fallback}")
    print("slowest instances:")
    for r in sorted(results, key=lambda r: -r.ms)[:5]:
        print(f"  {r.ms:9.1f} ms  {r.where} {r.label} {r.verdict}")
    print(f"wall time: {wall:.1f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([_record(r) for r in results], handle, indent=1)
    return 0


def _record(r) -> dict:
    c = r.counterexample
    return {"where": r.where, "line": r.line, "sizes": r.label, "rule": r.rule,
            "float_rule": r.float_rule, "verdict": r.verdict, "reason": r.reason,
            "ms": round(r.ms, 1), "encoding": r.encoding,
            "counterexample": None if c is None else {
                "values": {k: hex(v) for k, v in c.values.items()},
                "search": None if c.source is None else hex(c.source),
                "replacement": c.target_undefined or hex(c.target), "confirmed": c.confirmed}}


if __name__ == "__main__":
    raise SystemExit(main())
