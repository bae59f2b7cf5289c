"""How often `pressure-schedule` fires on generated programs and what it does to pressure.

    python bench/pressure_schedule.py [--programs N (1000)] [--seed S (1)] [--ra]

The programs are a campaign's (`fuzz.generate.cases.build_case`, size 50). For the programs the
pass changes it prints the mean change, in 16-bit halves, of:

* the maximum pressure the pass promises to lower (the most halves live at one point,
  from the reference liveness: `oracles.machine.schedule_oracle`), over the whole function
  and summed over its blocks;
* the allocator's demand (`agxir.machine.pressure.value_demand`: early kill, a dead result
  counted at its definition) and Mesa's RA demand (`demand(fn).maximum`: late kill, the
  reserved r0l), which the pass does not promise anything about, with how often each rose;
* with `--ra`: halfregs and threads after the machine pipeline (lower-cf, ra, lower-phis,
  lower-copies), with and without the pass.

Also the seconds the pass takes per program.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.ir import clone_function  # noqa: E402
from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINE  # noqa: E402
from agxir.machine.pressure import demand, machine_stats, value_demand  # noqa: E402
from agxir.machine.structure import Unstructurable  # noqa: E402
from agxir.passes.pressure_schedule import PASS  # noqa: E402
from fuzz.campaign import CampaignConfig  # noqa: E402
from fuzz.generate.cases import build_case  # noqa: E402
from oracles.machine.schedule_oracle import block_pressures  # noqa: E402


def _allocated(fn):
    work = clone_function(fn)
    for name in MACHINE_PIPELINE:
        MACHINE_PASSES[name].run(work)
    return machine_stats(work)


def _mean(values) -> str:
    return f"{statistics.mean(values):+.2f}" if values else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ra", action="store_true", help="also allocate both versions")
    args = parser.parse_args()

    config = CampaignConfig(seed=args.seed, pipelines=[])
    fired = 0
    peak, summed, alloc, mesa, halfregs, threads = [], [], [], [], [], []
    unstructurable = 0
    pass_seconds = 0.0
    for index in range(args.programs):
        fn, _inputs = build_case(args.seed, index, config)
        work = clone_function(fn)
        started = time.perf_counter()
        changed = PASS.run(work)
        pass_seconds += time.perf_counter() - started
        if not changed:
            continue
        fired += 1
        before, after = block_pressures(fn), block_pressures(work)
        peak.append(max(after.values()) - max(before.values()))
        summed.append(sum(after.values()) - sum(before.values()))
        alloc.append(value_demand(work) - value_demand(fn))
        mesa.append(demand(work).maximum - demand(fn).maximum)
        if args.ra:
            try:
                old, new = _allocated(fn), _allocated(work)
            except Unstructurable:  # control flow lower-cf declines, as campaigns skip it
                unstructurable += 1
                continue
            halfregs.append(new.halfregs - old.halfregs)
            threads.append(new.threads - old.threads)

    n = args.programs
    print(f"pressure-schedule over {n} programs (seed {args.seed}): fired on {fired} "
          f"({100 * fired / n:.1f}%), {1000 * pass_seconds / n:.2f} ms per program")
    if not fired:
        return
    print(f"  when it fires, mean change in halves: max pressure {_mean(peak)} "
          f"(lower in {sum(d < 0 for d in peak)}, equal in {sum(d == 0 for d in peak)}), "
          f"block maxima summed {_mean(summed)}")
    print(f"  allocator demand {_mean(alloc)} (rose in {sum(d > 0 for d in alloc)}, "
          f"fell in {sum(d < 0 for d in alloc)}); Mesa's RA demand {_mean(mesa)} "
          f"(rose in {sum(d > 0 for d in mesa)}, fell in {sum(d < 0 for d in mesa)})")
    if args.ra:
        print(f"  after RA: halfregs {_mean(halfregs)} (fewer in {sum(d < 0 for d in halfregs)}, "
              f"more in {sum(d > 0 for d in halfregs)}), threads {_mean(threads)} "
              f"(more in {sum(d > 0 for d in threads)}, fewer in {sum(d < 0 for d in threads)}); "
              f"{unstructurable} not structurable")


if __name__ == "__main__":
    main()
