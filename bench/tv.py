"""Translation validation time: `check_refinement` wall time (median, max) on loop-free
functions of about 50 instructions, before vs after each registered pass and the default
pipeline (pairs the pass changed), plus the wrong cmpsel of examples/wrong_cmpsel.py
(counterexamples, replay in the interpreter included).

    python bench/tv.py [--programs N] [--size S] [--seed S] [--threads T] [--timeout MS]

Programs come from `fuzz.generate` with loops and unstructured regions switched off; only
those within 10% of the requested size are kept.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agxir.ir import clone_function  # noqa: E402
from agxir.passes import DEFAULT_PIPELINE, PASSES, run_pipeline  # noqa: E402
from fuzz.generate import ChoiceSource, Features, generate_program  # noqa: E402
from oracles.smt.function import is_loop_free  # noqa: E402
from oracles.smt.refinement import check_refinement  # noqa: E402

sys.path.insert(0, str(ROOT / "examples"))
from wrong_cmpsel import wrong_cmpsel  # noqa: E402

LOOP_FREE = Features(loops=False, unstructured=False)


def _row(name: str, times: list[float], kinds: Counter) -> None:
    if not times:
        print(f"{name:<26} no pairs")
        return
    outcomes = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    print(
        f"{name:<26} {len(times):>4} pairs  median {statistics.median(times) * 1e3:8.1f} ms  "
        f"max {max(times) * 1e3:8.1f} ms  ({outcomes})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=40)
    parser.add_argument("--size", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--timeout", type=int, default=10000, metavar="MS")
    args = parser.parse_args()

    units = [(name, [name]) for name in PASSES] + [("default pipeline", list(DEFAULT_PIPELINE))]
    rewrites = [(name, lambda fn, names=names: any(c for _, c in run_pipeline(fn, names)))
                for name, names in units]
    rewrites.append(("wrong cmpsel (example)", wrong_cmpsel))
    times: dict[str, list[float]] = {name: [] for name, _ in rewrites}
    kinds: dict[str, Counter] = {name: Counter() for name, _ in rewrites}
    sizes = []
    seed = args.seed
    while len(sizes) < args.programs:
        fn = generate_program(ChoiceSource.from_seed(seed), LOOP_FREE, size=args.size)
        seed += 1
        if abs(fn.instruction_count() - args.size) > args.size // 10:
            continue  # keep the functions near the requested size
        assert is_loop_free(fn)
        sizes.append(fn.instruction_count())
        for name, rewrite in rewrites:
            after = clone_function(fn)
            if not rewrite(after):
                continue
            started = time.perf_counter()
            result = check_refinement(fn, after, threads=args.threads,
                                      timeout_ms=args.timeout)
            times[name].append(time.perf_counter() - started)
            label = result.kind
            if result.kind == "counterexample":
                label += " (confirmed)" if result.replay_confirms else " (unconfirmed)"
            kinds[name][label] += 1

    print(
        f"{args.programs} loop-free programs, {min(sizes)}-{max(sizes)} instructions "
        f"(median {statistics.median(sizes):g}), {args.threads} threads, "
        f"timeout {args.timeout} ms; pairs the rewrite changed"
    )
    for name, _ in rewrites:
        _row(name, times[name], kinds[name])
    every = [t for name, _ in rewrites[:-1] for t in times[name]]
    total = Counter()
    for name, _ in rewrites[:-1]:
        total.update(kinds[name])
    _row("all registered passes", every, total)


if __name__ == "__main__":
    main()
