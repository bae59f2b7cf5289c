"""`agxfuzz stats`: shader-db style reports of pipelines that differ in one pass.

    agxfuzz stats [--programs N] [--seed S] [--dir DIR] [--compare NAME[,NAME...]]
                  [--out OUTDIR] [--jobs J]

Compiles one corpus (generated from a seed, or every `.agx` file of DIR) through both
pipelines of each comparison (`fuzz.stats.comparisons`) through register allocation,
measures each program (`fuzz.stats.metrics`) and prints per comparison and metric the
totals, the relative change with a bootstrap 95% interval, helped/HURT counts and the most
helped and HURT programs (`fuzz.stats.report`). OUTDIR gets every program as
`programs/NAME.agx`, `stats.json`, `stats.csv`, `stats.png` (`fuzz.stats.plot`) and the
printed report as `report.txt`. A bad --compare name, an unreadable directory or a
malformed file is bad usage: one line, exit 2.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

from agxir.ir import SSA
from agxir.text import ParseError, parse_function
from agxir.verifier import verify
from fuzz.commands.errors import UsageError
from fuzz.commands.loaders import read_text
from fuzz.stats.comparisons import UnknownComparison, select
from fuzz.stats.metrics import METRICS
from fuzz.stats.plot import plot_changes
from fuzz.stats.report import bootstrap_weights, format_comparison, summarize, write_csv
from fuzz.stats.runner import compile_corpus

DEFAULT_PROGRAMS = 2000


def _read_dir(directory: str) -> list[tuple[str, str]]:
    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"agxfuzz: --dir {directory}: not a directory")
    files = sorted(p for p in root.iterdir() if p.suffix == ".agx" and p.is_file())
    if not files:
        raise UsageError(f"agxfuzz: --dir {directory}: no .agx files")
    out = []
    for path in files:
        text = read_text(str(path))
        try:
            fn = parse_function(text, filename=str(path))
        except ParseError as error:
            raise UsageError(str(error)) from None
        errors = verify(fn)
        if errors:
            raise UsageError(f"{path}: {errors[0]}")
        if fn.level != SSA:
            raise UsageError(f"{path}: a {fn.level}-level function; stats compiles SSA programs")
        out.append((path.stem, text))
    return out


def _arrays(comparison, compiled):
    names, before, after, failures = [], [], [], []
    for program in compiled:
        old = program.results[comparison.before.key]
        new = program.results[comparison.after.key]
        if isinstance(old, str) or isinstance(new, str):
            failures.append((program.name, old if isinstance(old, str) else new))
            continue
        names.append(program.name)
        before.append(old.values())
        after.append(new.values())
    shape = (len(names), 5)
    return (names, np.array(before, dtype=np.int64).reshape(shape),
            np.array(after, dtype=np.int64).reshape(shape), failures)


def run_stats(args) -> int:
    try:
        comparisons = select(args.compare)
    except UnknownComparison as error:
        raise UsageError(f"agxfuzz: --compare: {error}") from None
    if args.dir is not None and args.programs is not None:
        raise UsageError("agxfuzz: --programs and --dir exclude each other")
    files = _read_dir(args.dir) if args.dir is not None else None
    if args.seed is not None:
        seed = args.seed
    else:  # a generated corpus gets a fresh seed (printed); a directory's bootstrap seed 0
        seed = random.SystemRandom().randrange(1 << 32) if files is None else 0
    count = args.programs or DEFAULT_PROGRAMS
    jobs = args.jobs or os.cpu_count() or 1
    out = Path(args.out)
    try:
        (out / "programs").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"agxfuzz: --out {args.out}: {error.strerror or error}") from None

    pipelines = {}
    for comparison in comparisons:
        for side in (comparison.before, comparison.after):
            pipelines[side.key] = side.passes
    started = time.monotonic()
    compiled, declined = compile_corpus(pipelines, jobs=jobs, seed=seed, count=count,
                                        files=files)
    compile_seconds = time.monotonic() - started
    for program in compiled:
        (out / "programs" / f"{program.name}.agx").write_text(program.text, encoding="utf-8")

    if files is None:
        replay = f"agxfuzz stats --programs {count} --seed {seed}"
        corpus = (f"{len(compiled)} generated programs (seed {seed}; the first {len(compiled)} "
                  f"lower-cf can structure, {len(declined)} unstructurable skipped)")
    else:
        replay = f"agxfuzz stats --dir {args.dir}"
        corpus = f"{len(compiled)} programs of {args.dir}" + (
            f" ({len(declined)} declined by lower-cf: {', '.join(d.name for d in declined)})"
            if declined else "")
    if args.compare:
        replay += f" --compare {','.join(c.name for c in comparisons)}"
    header = (f"agxfuzz stats: {corpus}, {len(comparisons)} comparisons, {len(pipelines)} "
              f"pipelines, compiled in {compile_seconds:.1f} s on {jobs} jobs\n"
              f"replay: {replay}\n"
              "change: relative change of the total; 95% CI: paired bootstrap over programs "
              "(2000 resamples)")
    sections, records, rows, panels = [header], [], [], []
    weights = {}
    for comparison in comparisons:
        names, before, after, failures = _arrays(comparison, compiled)
        if len(names) not in weights:
            weights[len(names)] = (bootstrap_weights(len(names), seed) if names else None)
        summaries = summarize(names, before, after, weights[len(names)])
        sections.append(format_comparison(comparison, summaries, len(names), failures))
        records.append({
            "name": comparison.name, "why": comparison.why,
            "difference": comparison.difference(),
            "before": list(comparison.before.names), "after": list(comparison.after.names),
            "programs": len(names),
            "failures": [{"program": p, "reason": r} for p, r in failures],
            "metrics": {m: summaries[m].as_json() for m in METRICS},
        })
        per_metric = {}
        for column, metric in enumerate(METRICS):
            pairs = [(int(b), int(a)) for b, a in zip(before[:, column], after[:, column])]
            per_metric[metric] = pairs
            rows.extend((comparison.name, name, metric, b, a)
                        for name, (b, a) in zip(names, pairs))
        panels.append((comparison.name, per_metric))
    report = "\n\n".join(sections) + "\n"
    sys.stdout.write(report)
    (out / "report.txt").write_text(report, encoding="utf-8")
    summary = {
        "command": replay, "seed": seed if files is None else None,
        "directory": args.dir, "programs": len(compiled),
        "declined": [{"program": d.name, "reason": d.reason} for d in declined],
        "compile_seconds": round(compile_seconds, 3), "jobs": jobs,
        "interval": "paired bootstrap over programs, 2000 resamples, 2.5th-97.5th percentile",
        "metrics": list(METRICS), "comparisons": records,
    }
    (out / "stats.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    write_csv(out / "stats.csv", rows)
    plot_changes(out / "stats.png", panels)
    print(f"wrote {out}/report.txt, stats.json, stats.csv, stats.png and "
          f"{len(compiled)} programs in {out}/programs/ "
          f"({time.monotonic() - started:.1f} s in all)")
    return 0
