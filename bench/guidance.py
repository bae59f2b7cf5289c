"""Guidance against blind search: time to detection per zoo variant, and features reached
per minute, with and without the coverage-guided corpus.

    python bench/guidance.py [--seeds 1,2,3,4,5] [--time-per-bug S] [--only NAMES]
                             [--feature-programs N] [--feature-seeds K] [--jobs J]

Detection: each variant's own zoo campaign (`fuzz.zoo.runner.run_variant`, the variant's
pipeline, one job by default so a seed's programs are the same whatever the load) at each
seed, blind (guidance off, no coverage: the stream `agxfuzz zoo` times) and guided
(guidance on, coverage one program in 20: what `agxfuzz run` does by default). A seed that
does not catch the variant within the budget counts as the budget. Seconds depend on the
machine's load; programs to detection do not (with one job), so both are printed.

Features: the default campaign (`agxfuzz run`'s pipelines) for `--feature-programs` programs
per seed, coverage one in 20 both ways (arcs are features either way): features reached,
the seconds it took, and features reached per minute, without and with guidance. A budget of
programs rather than seconds keeps the features comparable under a varying load.
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

# The hard variants at default cost (docs/performance.md) and a few quick ones.
DEFAULT_ONLY = (
    "cmpsel-any-condition,copyprop-narrow-without-abs,copyprop-immediate-drops-neg,"
    "fmov-prop-neg-neg,fmov-rev-widening,fmov-rev-ignores-phi-uses,inline-imm-64bit-phi,"
    "shift-fuse-two-bit-field,dce-ignores-phi-uses,old-shift-model,cf-break-wrong-nesting,"
    "copies-no-cycle-breaking,reuse-misses-phi-copy-reads,schedule-ignores-memory-order"
)
MODES = (("blind", False, 0), ("guided", True, 20))


def _origin(outcome) -> str:
    """Whether the guided run's detecting program was fresh or a mutant (from its record)."""
    import json

    if not outcome.caught or outcome.files is None:
        return "-"
    record = json.loads(Path(outcome.files.record).read_text()).get("program", {})
    return "mutant" if "mutant_of" in record else "fresh"


def detection(args) -> None:
    from fuzz.zoo.catalogue import select
    from fuzz.zoo.runner import run_variant

    seeds = [int(s) for s in args.seeds.split(",")]
    variants = select(args.only)
    print(f"time to detection, {len(variants)} variants x seeds {args.seeds}, up to "
          f"{args.time_per_bug:g} s each, {args.jobs} job(s); load average "
          f"{os.getloadavg()[0]:.2f} at the start", flush=True)
    print(f"{'variant':<38} {'blind s med/worst':>18} {'guided s med/worst':>19} "
          f"{'blind progs med/worst':>22} {'guided progs med/worst':>23}")
    totals = {mode: [] for mode, _, _ in MODES}
    with tempfile.TemporaryDirectory() as directory:
        for variant in variants:
            row = {}
            for mode, guidance, every in MODES:
                seconds, programs, missed, origins = [], [], 0, []
                for seed in seeds:
                    outcome = run_variant(variant, seconds=args.time_per_bug, seed=seed,
                                          jobs=args.jobs, out=Path(directory) / mode,
                                          guidance=guidance, coverage_every=every)
                    caught = outcome.caught and outcome.seconds is not None
                    missed += not caught
                    seconds.append(outcome.seconds if caught else args.time_per_bug)
                    programs.append(outcome.programs if caught else None)
                    origins.append(_origin(outcome) if guidance else "")
                totals[mode].append(statistics.median(seconds))
                row[mode] = (seconds, programs, missed, origins)
            cells = []
            for mode, _, _ in MODES:
                seconds, _, missed, _ = row[mode]
                miss = f" ({missed} missed)" if missed else ""
                cells.append(f"{statistics.median(seconds):.2f}/{max(seconds):.2f}{miss}")
            for mode, _, _ in MODES:
                programs = row[mode][1]
                caught = [p for p in programs if p is not None]
                worst = "-" if None in programs else str(max(programs))
                cells.append(f"{statistics.median(caught) if caught else '-'}/{worst}")
            print(f"{variant.name:<38} {cells[0]:>18} {cells[1]:>19} {cells[2]:>22} {cells[3]:>23}",
                  flush=True)
            for mode, _, _ in MODES:
                per_seed = " ".join(
                    f"{s:.2f}s/{p if p is not None else 'missed'}" + (f" ({o})" if o else "")
                    for s, p, o in zip(row[mode][0], row[mode][1], row[mode][3], strict=True))
                print(f"    {mode:<7} per seed: {per_seed}", flush=True)
    print("median of the variants' median seconds: "
          + ", ".join(f"{mode} {statistics.median(values):.2f}" for mode, values in totals.items()))


def features_per_minute(args) -> None:
    from fuzz.campaign import CampaignConfig, run_campaign
    from fuzz.commands.zoo import default_pipelines

    pipelines = default_pipelines()
    seeds = [int(s) for s in args.seeds.split(",")][: args.feature_seeds]
    print(f"features reached per minute: the default campaign ({len(pipelines)} pipelines), "
          f"{args.feature_programs} programs per seed, seeds {seeds}, {args.jobs} job(s), "
          f"coverage 1 in 20 both ways; load average {os.getloadavg()[0]:.2f} at the start",
          flush=True)
    for mode, guidance in (("blind", False), ("guided", True)):
        rates, reached = [], []
        for seed in seeds:
            config = CampaignConfig(seed=seed, pipelines=pipelines, examples=args.feature_programs,
                                    jobs=args.jobs, reduce_seconds=0, guidance=guidance,
                                    coverage_every=20)
            started = time.monotonic()
            result = run_campaign(config, None)
            minutes = (time.monotonic() - started) / 60
            rates.append(len(result.corpus.features) / minutes)
            reached.append(len(result.corpus.features))
            kinds = ", ".join(f"{k} {n}" for k, n in result.corpus.by_kind().items())
            print(f"  {mode:<7} seed {seed}: {len(result.corpus.features)} features ({kinds}) "
                  f"in {minutes * 60:.0f} s ({len(result.corpus.features) / minutes:.0f}/minute), "
                  f"corpus {result.corpus.size}, {result.stats.mutant_programs} mutants",
                  flush=True)
        print(f"  {mode:<7} median {statistics.median(reached):.0f} features after "
              f"{args.feature_programs} programs, {statistics.median(rates):.0f} features/minute",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--time-per-bug", type=float, default=60.0)
    parser.add_argument("--only", default=DEFAULT_ONLY,
                        help="variants, comma-separated (default: 14 of the 49, see the source)")
    parser.add_argument("--feature-programs", type=int, default=400)
    parser.add_argument("--feature-seeds", type=int, default=3,
                        help="how many of the seeds the features measurement runs")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--skip-detection", action="store_true")
    parser.add_argument("--skip-features", action="store_true")
    args = parser.parse_args()
    if not args.skip_detection:
        detection(args)
    if not args.skip_features:
        features_per_minute(args)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
