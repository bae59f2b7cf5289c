"""Interpreter throughput: lane-instructions per second on a 100-instruction loop-free
program and on a loop, each run over 32 threads x 8 input sets (256 lanes), beside raw
numpy's rate measured in the same run (issue 23: the interpreter should reach 0.3 of it).

    python bench/interp.py [--repeat N] [--threads T] [--sets S]

Raw numpy is the floor a vectorized interpreter of this design works against: one ufunc
call (`np.add(a, b, out=out)` over uint32) per lane-instruction of the program, over every
lane at once (the same figure bench/compare_trees.py prints). Times are CPU seconds
(time.process_time), best of N, so figures taken on a loaded machine still compare within
one run. Each row also splits a run into its compiled block code and the rest (setting the
lanes up, scheduling, race detection, outcomes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.verifier import check  # noqa: E402
from bench.programs import loop, straight_line  # noqa: E402
from oracles.inputs import random_input_sets  # noqa: E402
from oracles.interp import CompiledFunction  # noqa: E402


def _best(action, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        action()
        best = min(best, time.process_time() - started)
    return best


def raw_numpy_rate(lanes: int, calls: int, repeat: int) -> float:
    """Lane-instructions per second of `calls` back-to-back ufunc calls over `lanes`."""
    a = np.arange(lanes, dtype=np.uint32)
    b = np.ones(lanes, dtype=np.uint32)
    out = np.empty(lanes, dtype=np.uint32)

    def run():
        for _ in range(calls):
            np.add(a, b, out=out)

    return calls * lanes / _best(run, repeat)


def _block_seconds(compiled: CompiledFunction, inputs, repeat: int) -> float:
    """CPU seconds one run spends inside the compiled block functions (best of `repeat`)."""
    spent = [0.0]
    originals = [block.run for block in compiled.blocks]

    def timed(original):
        def run(*args):
            started = time.process_time()
            result = original(*args)
            spent[0] += time.process_time() - started
            return result
        return run

    class TimedVMBlock:  # what the runner calls while every lane is at one block (the VM's)
        def __init__(self, block):
            self.block = block
            self.run_counting = timed(block.run_counting)
            self.condition = block.condition

    for block, original in zip(compiled.blocks, originals, strict=True):
        block.run = timed(original)
    vm_blocks = list(compiled.vm.blocks) if compiled.vm is not None else None
    if vm_blocks is not None:
        compiled.vm.blocks[:] = [TimedVMBlock(block) for block in vm_blocks]
    best = float("inf")
    try:
        for _ in range(repeat):
            spent[0] = 0.0
            compiled.run(inputs)
            best = min(best, spent[0])
    finally:
        for block, original in zip(compiled.blocks, originals, strict=True):
            block.run = original
        if vm_blocks is not None:
            compiled.vm.blocks[:] = vm_blocks
    return best


def measure(name: str, fn, threads: int, sets: int, repeat: int) -> None:
    check(fn)
    started = time.process_time()
    compiled = CompiledFunction(fn)
    compile_ms = (time.process_time() - started) * 1e3
    inputs = random_input_sets(fn, threads, seed=7, count=sets)
    outcomes = compiled.run(inputs)  # warm up
    best = _best(lambda: compiled.run(inputs), repeat)
    blocks = _block_seconds(compiled, inputs, repeat)
    work = compiled.lane_instructions
    lanes = threads * sets
    rate = work / best
    # A raw round is short (tens of us): more rounds, so a loaded machine's noise is left out.
    raw = raw_numpy_rate(lanes, max(1, work // lanes), 10 * repeat)
    kinds = sorted({o.kind for o in outcomes})
    print(
        f"{name:<14} {fn.instruction_count():>4} static instrs  {work:>7} lane-instrs/run  "
        f"compile {compile_ms:6.2f} ms  run {best * 1e6:8.1f} us (blocks {blocks * 1e6:7.1f})  "
        f"{rate / 1e6:6.1f} M lane-instr/s  raw numpy {raw / 1e6:6.1f} M  "
        f"ratio {rate / raw:5.3f}  outcomes {','.join(kinds)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--sets", type=int, default=8)
    args = parser.parse_args()
    print(f"{args.threads} threads x {args.sets} input sets, best of {args.repeat}, CPU time")
    measure("straight-line", straight_line(100), args.threads, args.sets, args.repeat)
    measure("loop", loop(), args.threads, args.sets, args.repeat)


if __name__ == "__main__":
    main()
