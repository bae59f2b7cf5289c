"""Time to detection per zoo variant over several seeds: each variant's median and worst
seconds, against issue 10's targets (median at most 5 s, worst at most 30 s).

    python bench/zoo.py [--seeds 1,2,3,4,5] [--time-per-bug S] [--jobs J] [--only NAMES]
                        [--default-cost]

Runs `agxfuzz zoo --json` once per seed (the zoo's own campaign: the variant's pipeline,
address-heavy programs for address variants). With --default-cost every variant's campaign
also runs the default campaign's other pipelines on each program (each registered pass
alone, the default and address pipelines, the machine pipelines), so a program costs what
it costs in `agxfuzz run` and the seconds are those a user of the default settings waits.
A variant not caught counts as the time budget. Prints one row per variant and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_seed(seed: int, args) -> dict:
    with tempfile.TemporaryDirectory() as directory:
        report = Path(directory) / "zoo.json"
        command = [sys.executable, "-m", "fuzz", "zoo", "--seed", str(seed),
                   "--time-per-bug", str(args.time_per_bug), "--json", str(report),
                   "--out", str(Path(directory) / "findings")]
        if args.jobs:
            command += ["--jobs", str(args.jobs)]
        if args.only:
            command += ["--only", args.only]
        if args.default_cost:
            command.append("--default-cost")
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
        return json.loads(report.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--time-per-bug", type=float, default=30.0)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--only")
    parser.add_argument("--default-cost", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    times: dict[str, list[float]] = {}
    missed: dict[str, int] = {}
    for seed in seeds:
        for row in run_seed(seed, args)["variants"]:
            caught = row["caught"] and row["seconds"] is not None
            times.setdefault(row["name"], []).append(
                row["seconds"] if caught else args.time_per_bug)
            missed[row["name"]] = missed.get(row["name"], 0) + (not caught)
    load = os.getloadavg()[0]
    mode = "default campaign cost" if args.default_cost else "the zoo's own campaigns"
    print(f"zoo detection over seeds {args.seeds} ({mode}), up to {args.time_per_bug:g} s "
          f"each, load average {load:.2f}")
    print(f"{'variant':<42} {'median s':>9} {'worst s':>8}  per seed")
    over = 0
    for name, seconds in times.items():
        median, worst = statistics.median(seconds), max(seconds)
        flag = "" if median <= 5 and worst <= 30 and not missed[name] else "  <- over target"
        if missed[name]:
            flag += f" (not caught at {missed[name]} seed{'s' if missed[name] > 1 else ''})"
        over += bool(flag)
        per_seed = " ".join(f"{s:.2f}" for s in seconds)
        print(f"{name:<42} {median:>9.2f} {worst:>8.2f}  {per_seed}{flag}")
    medians = [statistics.median(s) for s in times.values()]
    print(f"{len(times)} variants: median of medians {statistics.median(medians):.2f} s, "
          f"worst median {max(medians):.2f} s, worst single {max(max(s) for s in times.values()):.2f} s; "
          f"{over} over target (median > 5 s, worst > 30 s, or not caught at some seed; "
          f"a seed that did not catch it counts as {args.time_per_bug:g} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
