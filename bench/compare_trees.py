"""Two trees side by side, in one run, on the same programs: CPU ms per program for the
default campaign's pipelines and for one pass alone, and the interpreter's
lane-instructions per second beside raw numpy's (issue 23's figures).

    python bench/compare_trees.py OLD NEW [--programs N] [--seed S] [--pass NAME] [--rounds R]

OLD and NEW are git revisions of this repository (`main~5`, a commit) or directories
holding a checkout. A revision is unpacked with `git archive` into a temporary directory
and, if it has C extensions (setup.py), they are built there as `pip install -e .` builds
them on a fresh clone; a directory is measured as it is. The output names the compiled
parts each tree ran with, so a tree measured without its extensions is never mistaken
for one measured with them.
The programs are drawn once, by NEW's generator (its `build_case`, as `agxfuzz run` draws
them), printed with their input sets, and each tree parses the same texts: a generator
change between the trees does not change what is measured. Each tree is measured in a
child process of its own (`python -c`, the tree first on sys.path), alternating OLD and
NEW for `--rounds` rounds, and the best round of each is kept: CPU time
(time.process_time), so a figure taken on a shared machine still compares within the run;
what differs between machines is the ratio's denominator, which is why the issue's targets
are ratios read from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs inside a tree: draws programs (mode "draw") or measures them (mode "measure").
CHILD = r'''
import json, sys, time, argparse
request = json.loads(sys.argv[1])
sys.path.insert(0, request["tree"])
import numpy as np
from agxir.text import parse_function, print_function
from fuzz.campaign import CampaignConfig
try:  # where build_case lives since issue 22; before, in fuzz.campaign
    from fuzz.generate.cases import build_case
except ImportError:
    from fuzz.campaign import build_case
from fuzz.commands.units import units_under_test
from fuzz.harness import Harness
from oracles.inputs import InputSet
no_flags = argparse.Namespace(passes=None, python_passes=None, pass_commands=None)
_, pipelines = units_under_test(no_flags)
config = CampaignConfig(seed=request["seed"], pipelines=pipelines)
if request["mode"] == "draw":
    cases = []
    for index in range(request["programs"]):
        fn, inputs = build_case(request["seed"], index, config)
        cases.append({"text": print_function(fn), "inputs": [s.to_json() for s in inputs]})
    print(json.dumps(cases))
    raise SystemExit(0)
cases = [(parse_function(c["text"]), [InputSet.from_json(s) for s in c["inputs"]])
         for c in json.loads(open(request["programs_file"]).read())]
from fuzz.passes_under_test import registered
alone = [[registered(request["pass"])]]
options = config.harness_options()

def cpu_ms(pipes):
    start = time.process_time()
    findings = 0
    for fn, inputs in cases:
        findings += len(Harness(inputs, **options).check(fn, pipes))
    return 1000 * (time.process_time() - start) / len(cases), findings

default_ms, default_findings = cpu_ms(pipelines)
alone_ms, alone_findings = cpu_ms(alone)

from bench.programs import straight_line
from oracles.inputs import random_input_sets
from oracles.interp import CompiledFunction
fn = straight_line(100)
compiled = CompiledFunction(fn)
lanes = request["threads"] * request["sets"]
inputs = random_input_sets(fn, request["threads"], seed=7, count=request["sets"])
compiled.run(inputs)
best = float("inf")
for _ in range(30):
    start = time.process_time()
    compiled.run(inputs)
    best = min(best, time.process_time() - start)
interp_rate = compiled.lane_instructions / best
# Raw numpy: as many ufunc calls as the program has lane-instructions per lane, each over
# every lane at once, the floor a vectorized interpreter of this design works against.
count = compiled.lane_instructions // lanes
a = np.arange(lanes, dtype=np.uint32)
b = np.ones(lanes, dtype=np.uint32)
out = np.empty(lanes, dtype=np.uint32)
raw_best = float("inf")
for _ in range(30):
    start = time.process_time()
    for _ in range(count):
        np.add(a, b, out=out)
    raw_best = min(raw_best, time.process_time() - start)
raw_rate = count * lanes / raw_best
import importlib
built_parts = []  # the tree's own extensions (an editable install can map a missing one
for module in ("agxir.ccore", "oracles.interp.lanevm"):  # to another checkout's build)
    try:
        if importlib.import_module(module).__file__.startswith(request["tree"]):
            built_parts.append(module)
    except ImportError:
        pass
print(json.dumps({"compiled": built_parts, "default_ms": default_ms, "default_findings": default_findings,
                  "pipelines": len(pipelines), "alone_ms": alone_ms,
                  "alone_findings": alone_findings, "interp_rate": interp_rate,
                  "raw_rate": raw_rate}))
'''


def materialize(spec: str, scratch: Path) -> Path:
    """A directory holding the tree `spec` names: itself if it is one, else the git
    revision unpacked with `git archive`."""
    if Path(spec).is_dir():
        return Path(spec).resolve()
    target = scratch / spec.replace("/", "_").replace("~", "_")
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", spec],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"bench/compare_trees.py: {spec}: neither a directory nor a revision "
                         f"({archive.stderr.decode().strip()})")
    archive_path = scratch / f"{target.name}.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(target, filter="data")
    if (target / "setup.py").exists():
        build = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                               cwd=target, capture_output=True, text=True, check=False)
        if build.returncode != 0:  # as an optional extension: the tree runs without it
            tail = (build.stderr.strip().splitlines() or ["(no output)"])[-1]
            print(f"bench/compare_trees.py: {spec}: its C extensions did not build ({tail})",
                  file=sys.stderr)
    return target


def child(tree: Path, request: dict) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    result = subprocess.run([sys.executable, "-c", CHILD, json.dumps({**request, "tree": str(tree)})],
                            cwd=tree, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        tail = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"bench/compare_trees.py: measuring {tree} failed: {tail}")
    return result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pass", dest="pass_name", default="cmpsel",
                        help="the pass measured alone (default cmpsel)")
    parser.add_argument("--rounds", type=int, default=2, help="measurements of each tree, "
                        "alternating; the best is kept (default 2)")
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--sets", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agxfuzz-compare-") as scratch_name:
        scratch = Path(scratch_name)
        old, new = materialize(args.old, scratch), materialize(args.new, scratch)
        base = {"seed": args.seed, "programs": args.programs, "pass": args.pass_name,
                "threads": args.threads, "sets": args.sets}
        programs = scratch / "programs.json"
        programs.write_text(child(new, {**base, "mode": "draw"}))
        request = {**base, "mode": "measure", "programs_file": str(programs)}
        best: dict[str, dict] = {}
        for _ in range(args.rounds):
            for name, tree in (("old", old), ("new", new)):
                figures = json.loads(child(tree, request))
                kept = best.get(name)
                if kept is None:
                    best[name] = figures
                else:  # the best of each figure over the rounds
                    for key in ("default_ms", "alone_ms"):
                        kept[key] = min(kept[key], figures[key])
                    for key in ("interp_rate", "raw_rate"):
                        kept[key] = max(kept[key], figures[key])
    o, n = best["old"], best["new"]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.programs} programs (seed {args.seed}, drawn by NEW's generator), "
          f"best of {args.rounds} rounds, CPU time; load average {load}")
    print(f"OLD {args.old}, NEW {args.new}")
    for name, figures in (("OLD", o), ("NEW", n)):
        parts = ", ".join(figures.get("compiled", [])) or "none"
        print(f"{name} compiled parts: {parts}")
    print(f"{'':<46} {'OLD':>9} {'NEW':>9} {'speedup':>8}")
    rows = [
        (f"default campaign ({n['pipelines']} pipelines), ms/program", o["default_ms"],
         n["default_ms"]),
        (f"{args.pass_name} alone, ms/program", o["alone_ms"], n["alone_ms"]),
    ]
    for label, before, after in rows:
        print(f"{label:<46} {before:>9.2f} {after:>9.2f} {before / after:>7.2f}x")
    lanes = args.threads * args.sets
    print(f"{f'interpreter, M lane-instr/s ({lanes} lanes)':<46} {o['interp_rate'] / 1e6:>9.1f} "
          f"{n['interp_rate'] / 1e6:>9.1f} {n['interp_rate'] / o['interp_rate']:>7.2f}x")
    print(f"{'raw numpy, M lane-instr/s':<46} {o['raw_rate'] / 1e6:>9.1f} "
          f"{n['raw_rate'] / 1e6:>9.1f}")
    print(f"{'interpreter / raw numpy':<46} {o['interp_rate'] / o['raw_rate']:>9.3f} "
          f"{n['interp_rate'] / n['raw_rate']:>9.3f}")
    print(f"findings: default OLD {o['default_findings']} NEW {n['default_findings']}, "
          f"alone OLD {o['alone_findings']} NEW {n['alone_findings']}")


if __name__ == "__main__":
    main()
