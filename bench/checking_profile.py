"""Where a campaign's checking time goes: CPU time per program through every pipeline
`agxfuzz run` uses by default (each pass alone, the default and address pipelines, the
machine pipelines), in this process, and with --profile the functions that take it.

    python bench/checking_profile.py [--programs N] [--seed S] [--profile]

CPU time (time.process_time), not wall time, so a figure taken while the machine is shared
still compares with one taken on a quiet machine. Programs are generated before the clock
starts: this measures checking only.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.campaign import CampaignConfig  # noqa: E402
from fuzz.commands.units import units_under_test  # noqa: E402
from fuzz.generate.cases import build_case  # noqa: E402
from fuzz.harness import Harness  # noqa: E402

# The parts of the loop a reader asks about, by the function that owns each.
PARTS = (
    ("fuzz/harness.py", "check", "everything"),
    ("fuzz/harness.py", "step_verdict", "step oracles (all)"),
    ("fuzz/step_oracles.py", "_refinement", "  refinement (interpreting)"),
    ("fuzz/step_oracles.py", "_promotion", "  promotion invariant (z3)"),
    ("fuzz/step_oracles.py", "_verifier", "  verifier"),
    ("fuzz/step_oracles.py", "_liveness", "  liveness against the reference"),
    ("fuzz/step_oracles.py", "_ra_checker", "  RA checker"),
    ("fuzz/step_oracles.py", "_copy_checker", "  copy checker"),
    ("oracles/machine/wave.py", "run_wave", "wave interpreter (within refinement)"),
    ("agxir/text/front.py", "print_function", "printing"),
    ("agxir/ir.py", "clone_function", "cloning"),
    ("agxir/rewrite/matcher.py", "apply_rules", "rule-table passes"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="also show where the time goes")
    args = parser.parse_args()

    no_flags = argparse.Namespace(passes=None, python_passes=None, pass_commands=None)
    _, pipelines = units_under_test(no_flags)
    config = CampaignConfig(seed=args.seed, pipelines=pipelines)
    cases = [build_case(args.seed, i, config) for i in range(args.programs)]

    def check_all() -> None:
        for fn, inputs in cases:
            Harness(inputs, **config.harness_options()).check(fn, pipelines)

    start = time.process_time()
    check_all()
    cpu = time.process_time() - start
    print(f"{len(pipelines)} pipelines, {args.programs} programs (seed {args.seed}): "
          f"{1000 * cpu / args.programs:.1f} ms CPU per program, "
          f"{args.programs / cpu:.1f} programs per CPU-second")
    if not args.profile:
        return
    profiler = cProfile.Profile()
    profiler.runcall(check_all)
    stats = pstats.Stats(profiler, stream=io.StringIO())
    found = {}
    for (path, _line, name), row in stats.stats.items():
        for suffix, function, label in PARTS:
            if name == function and path.endswith(suffix):
                found[label] = row[3], row[1]  # cumulative seconds, calls
    total = found["everything"][0]
    print("under cProfile (its overhead inflates the total; the shares are what to read):")
    for _suffix, _function, label in PARTS:
        if label in found:
            seconds, calls = found[label]
            print(f"  {label:<40} {seconds:7.2f} s {100 * seconds / total:5.1f}%  {calls} calls")

if __name__ == "__main__":
    main()
