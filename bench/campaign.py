"""Campaign throughput: programs fully checked per second on one core, default pipeline,
programs of about 50 instructions, 8 input sets x 32 threads, every oracle on.

    python bench/campaign.py [--programs N] [--seed S] [--all-passes]

Runs in this process (one core); `agxfuzz run` runs one such worker per core.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.campaign import CampaignConfig  # noqa: E402
from fuzz.generate.cases import build_case  # noqa: E402
from fuzz.harness import Harness  # noqa: E402
from fuzz.passes_under_test import registered  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--all-passes", action="store_true",
                        help="every registered pass alone plus the default pipeline, as `run` does")
    parser.add_argument("--address", action="store_true",
                        help="the address pipeline on address-heavy programs (promotion invariant on)")
    args = parser.parse_args()

    from agxir.passes import ADDRESS_PIPELINE, DEFAULT_PIPELINE, PASSES

    chosen = ADDRESS_PIPELINE if args.address else DEFAULT_PIPELINE
    pipelines = [[registered(name) for name in chosen]]
    if args.all_passes:
        pipelines += [[registered(name)] for name in PASSES]
    config = CampaignConfig(seed=args.seed, pipelines=pipelines, address_heavy=args.address)

    started = time.perf_counter()
    cases = [build_case(args.seed, i, config) for i in range(args.programs)]
    generate = time.perf_counter() - started
    instructions = sum(fn.instruction_count() for fn, _ in cases) / len(cases)

    started = time.perf_counter()
    findings = 0
    variants = 0
    for fn, inputs in cases:
        harness = Harness(inputs, **config.harness_options())
        findings += len(harness.check(fn, pipelines))
        variants += len(harness._outcomes)
    check = time.perf_counter() - started
    total = generate + check
    print(f"{'address' if args.address else 'default'} pipeline: "
          f"{args.programs} programs, {instructions:.1f} instructions on average, "
          f"{len(pipelines)} pipeline(s), {variants / args.programs:.1f} distinct programs "
          f"interpreted per program, {findings} findings")
    print(f"generate {generate / args.programs * 1e3:.2f} ms/program, "
          f"check {check / args.programs * 1e3:.2f} ms/program")
    print(f"{args.programs / total:.1f} programs fully checked per second on one core")


if __name__ == "__main__":
    main()
