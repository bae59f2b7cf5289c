"""Generator throughput: programs, CFG shapes and input sets per second on one core.

    python bench/generate.py [--count N] [--size S]

Seeded generation (`ChoiceSource.from_seed`) is what a campaign runs; the byte-driven path
is what the Hypothesis strategies run (random bytes here, without Hypothesis' own cost),
and the last line goes through `programs()` itself. Programs are dropped as soon as they
are measured, as a campaign does: keeping thousands alive makes the garbage collector's
full passes dominate.

The address-heavy lines measure `generate_program(..., address_heavy=True)`, then run 300
of those programs on generated inputs (8 sets x 32 threads) for the share of input sets a
campaign would skip as undefined, and print the share of programs containing each address
shape of `fuzz.generate.address_shapes`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.generate import (  # noqa: E402
    ADDRESS_SHAPES,
    ChoiceSource,
    Features,
    address_shapes,
    generate_cfg,
    generate_inputs,
    generate_program,
)


def rate(label: str, count: int, make, unit: str = "programs") -> None:
    instructions = []
    make(0)  # warm the per-row caches
    started = time.perf_counter()
    for i in range(count):
        instructions.append(make(i))
    elapsed = time.perf_counter() - started
    mean = statistics.mean(instructions) if instructions[0] is not None else None
    detail = f"  mean {mean:5.1f} instructions" if mean is not None else ""
    print(f"{label:<44} {count / elapsed:8.0f} {unit}/s{detail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--size", type=int, default=50)
    args = parser.parse_args()
    count, size = args.count, args.size
    all_on = Features.all_on()

    def seeded(i):
        return generate_program(ChoiceSource.from_seed(i), all_on, size=size).instruction_count()

    def swarm(i):
        source = ChoiceSource.from_seed(i)
        features = Features.from_source(source)
        return generate_program(source, features, size=size).instruction_count()

    heavy = Features.all_on(address_heavy=True)

    def address_heavy(i):
        return generate_program(ChoiceSource.from_seed(i), heavy, size=size).instruction_count()

    blobs = [random.Random(i).randbytes(30 * size) for i in range(min(count, 500))]

    def from_bytes(i):
        data = blobs[i % len(blobs)]
        return generate_program(
            ChoiceSource.from_bytes(data), all_on, size=size
        ).instruction_count()

    def shapes(i):
        generate_cfg(ChoiceSource.from_seed(i), all_on, max_blocks=12)

    sample = [generate_program(ChoiceSource.from_seed(i), all_on, size=size) for i in range(50)]

    def inputs(i):
        generate_inputs(sample[i % len(sample)], ChoiceSource.from_seed(i), threads=32, sets=8)

    print(f"one core, size={size}, {count} each")
    rate("generate_program, seeded, all features on", count, seeded)
    rate("generate_program, seeded, swarm features", count, swarm)
    rate("generate_program, seeded, address-heavy", count, address_heavy)
    rate("generate_program, from random bytes", count, from_bytes)
    rate("generate_cfg, seeded, max_blocks=12", count, shapes, "shapes")
    rate("generate_inputs, 8 sets x 32 threads", min(count, 2000), inputs, "calls")
    hypothesis_rate(min(count, 500), size)
    address_report(300, size)


def hypothesis_rate(count: int, size: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings

    from fuzz.strategies import programs

    seen = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(programs(size=size))
    def probe(fn):
        seen.append(fn.instruction_count())

    started = time.perf_counter()
    probe()
    elapsed = time.perf_counter() - started
    print(
        f"{'programs() through Hypothesis':<44} {len(seen) / elapsed:8.0f} programs/s"
        f"  mean {statistics.mean(seen):5.1f} instructions"
    )


def address_report(count: int, size: int) -> None:
    """UB skip rate and address-shape shares of address-heavy programs."""
    from oracles.interp import CompiledFunction

    heavy = Features.all_on(address_heavy=True)
    found: dict[str, int] = dict.fromkeys(ADDRESS_SHAPES, 0)
    undefined = total = 0
    reasons: dict[str, int] = {}
    for i in range(count):
        fn = generate_program(ChoiceSource.from_seed(i), heavy, size=size)
        for shape in address_shapes(fn):
            found[shape] += 1
        sets = generate_inputs(fn, ChoiceSource.from_seed(10**6 + i), threads=32, sets=8)
        for outcome in CompiledFunction(fn).run(sets):
            total += 1
            if outcome.kind == "undefined":
                undefined += 1
                reasons[outcome.reason] = reasons.get(outcome.reason, 0) + 1
    detail = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "none"
    print(f"address-heavy UB skip rate ({count} programs, 8 sets x 32 threads): "
          f"{undefined / total:.2%} of input sets ({detail})")  # fmt: skip
    print("address shapes, share of address-heavy programs containing each:")
    for shape in ADDRESS_SHAPES:
        print(f"  {shape:<24} {found[shape] / count:6.0%}")


if __name__ == "__main__":
    main()
