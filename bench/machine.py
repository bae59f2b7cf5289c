"""Machine-level figures of issue 8, on one core:

    python bench/machine.py [--programs N] [--seed S]

* programs checked per second through the machine pipeline (lower-cf, ra, lower-phis,
  lower-copies, every oracle after every step) against the default SSA pipeline alone;
* wave-interpreter lane-instructions per second against the SSA interpreter's, on the
  same programs and input sets (the lowered program against its SSA input);
* the allocator's demand against the reference demand, and the highest half used.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.ir import clone_function  # noqa: E402
from agxir.machine.lower_cf import lower_cf, structurable  # noqa: E402
from agxir.machine.pipeline import MACHINE_PIPELINE  # noqa: E402
from agxir.machine.regalloc import allocate  # noqa: E402
from agxir.passes import DEFAULT_PIPELINE  # noqa: E402
from fuzz.campaign import CampaignConfig  # noqa: E402
from fuzz.generate.cases import build_case  # noqa: E402
from fuzz.harness import Harness  # noqa: E402
from fuzz.passes_under_test import registered  # noqa: E402
from oracles.interp import CompiledFunction  # noqa: E402
from oracles.machine import CompiledWave  # noqa: E402
from oracles.machine.pressure_oracle import reference_demand  # noqa: E402


def rate(cases, pipeline, config) -> float:
    started = time.perf_counter()
    for fn, inputs in cases:
        Harness(inputs, **config.harness_options()).check(fn, [pipeline])
    return len(cases) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    config = CampaignConfig(seed=args.seed, pipelines=[])
    cases = [build_case(args.seed, i, config) for i in range(args.programs)]
    structured = [(fn, inputs) for fn, inputs in cases if structurable(fn) is None]
    print(f"{len(cases)} programs, {len(structured)} structurable "
          f"({100 * len(structured) / len(cases):.1f}%), seed {args.seed}")

    ssa = rate(structured, [registered(n) for n in DEFAULT_PIPELINE], config)
    machine = rate(structured, [registered(n) for n in MACHINE_PIPELINE], config)
    print(f"checked per second on one core: default SSA pipeline {ssa:.1f}, "
          f"machine pipeline {machine:.1f} ({machine / ssa:.2f} of the SSA rate)")

    ssa_seconds = wave_seconds = 0.0
    ssa_lanes = wave_lanes = 0
    for fn, inputs in structured:
        lowered = clone_function(fn)
        lower_cf(lowered)
        compiled, wave = CompiledFunction(fn), CompiledWave(lowered)
        started = time.perf_counter()
        compiled.run(inputs)
        ssa_seconds += time.perf_counter() - started
        started = time.perf_counter()
        wave.run(inputs)
        wave_seconds += time.perf_counter() - started
        ssa_lanes += compiled.lane_instructions
        wave_lanes += wave.lane_instructions
    print(f"lane-instructions per second (compiled code, runs only): SSA interpreter "
          f"{ssa_lanes / ssa_seconds / 1e6:.2f} M, wave interpreter "
          f"{wave_lanes / wave_seconds / 1e6:.2f} M "
          f"({(wave_lanes / wave_seconds) / (ssa_lanes / ssa_seconds):.2f} of the SSA rate)")

    equal = 0
    demands = []
    for fn, _ in structured:
        lowered = clone_function(fn)
        lower_cf(lowered)
        allocation = allocate(lowered)
        expected = reference_demand(lowered)
        equal += allocation.demand == expected
        demands.append((allocation.demand, allocation.highest_half + 1))
    over = sum(1 for demand, used in demands if used > demand)
    print(f"allocator demand equal to the reference on {equal} of {len(structured)}; "
          f"largest demand {max(d for d, _ in demands)} halves; highest half used above the "
          f"demand (alignment and r0l) on {over}")


if __name__ == "__main__":
    main()
