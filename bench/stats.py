"""`agxfuzz stats` wall time: the whole command (corpus, every comparison's pipelines
through RA, report, JSON, CSV, PNG, programs written) over N generated programs.

    python bench/stats.py [--programs N (2000)] [--seed S (1)] [--jobs J (all cores)]
                          [--compare NAMES] [--out DIR (a temporary directory)]

Prints the wall seconds in all, the compile phase alone, the programs per second, and the
CPU seconds this process and its workers used (on a machine shared with other work the
wall time is the CPU time spread over the cores this run actually got; the load average
before and after says how busy the machine was). The issue's target: 2,000 programs,
every row, under 60 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.cli import main as agxfuzz  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--compare", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        out = Path(args.out or scratch)
        argv = ["stats", "--programs", str(args.programs), "--seed", str(args.seed),
                "--jobs", str(args.jobs), "--out", str(out)]
        if args.compare:
            argv += ["--compare", args.compare]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            status = agxfuzz(argv)
        seconds = time.perf_counter() - started
        cpu = sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
                  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        if status != 0:
            sys.exit(f"agxfuzz stats exited {status}")
        summary = json.loads((out / "stats.json").read_text())
    print(f"agxfuzz stats: {summary['programs']} programs, {len(summary['comparisons'])} "
          f"comparisons, {args.jobs} jobs, {os.cpu_count()} cores: {seconds:.1f} s in all "
          f"(compile {summary['compile_seconds']:.1f} s), "
          f"{summary['programs'] / seconds:.0f} programs/s; {cpu:.1f} CPU s; load average "
          f"{load:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
