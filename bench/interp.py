"""Interpreter throughput: lane-instructions per second on a 100-instruction loop-free
program and on a loop, each run over 32 threads x 8 input sets (256 lanes).

    python bench/interp.py [--repeat N] [--threads T] [--sets S]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.verifier import check  # noqa: E402
from bench.programs import loop, straight_line  # noqa: E402
from oracles.inputs import random_input_sets  # noqa: E402
from oracles.interp import CompiledFunction  # noqa: E402


def measure(name: str, fn, threads: int, sets: int, repeat: int) -> None:
    check(fn)
    started = time.perf_counter()
    compiled = CompiledFunction(fn)
    compile_ms = (time.perf_counter() - started) * 1e3
    inputs = random_input_sets(fn, threads, seed=7, count=sets)
    compiled.run(inputs)  # warm up
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        outcomes = compiled.run(inputs)
        best = min(best, time.perf_counter() - started)
    work = compiled.lane_instructions
    kinds = sorted({o.kind for o in outcomes})
    print(
        f"{name:<14} {fn.instruction_count():>4} static instrs  {work:>7} lane-instrs/run  "
        f"compile {compile_ms:6.2f} ms  run {best * 1e6:8.1f} us  "
        f"{work / best / 1e6:7.1f} M lane-instr/s  outcomes {','.join(kinds)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--sets", type=int, default=8)
    args = parser.parse_args()
    print(f"{args.threads} threads x {args.sets} input sets, best of {args.repeat}")
    measure("straight-line", straight_line(100), args.threads, args.sets, args.repeat)
    measure("loop", loop(), args.threads, args.sets, args.repeat)


if __name__ == "__main__":
    main()
