"""Line and branch coverage of Mesa's backend pass files under a `run --mesa` campaign.

`measure(examples=N | time=S, seed=...)` builds the gcov bridge (`build_bridge(coverage=
True)`: its own cache entry, `-O0 --coverage`, the .gcno notes kept beside the binary), runs
`agxfuzz run --mesa` as a child process with that bridge (`AGXFUZZ_MESA_BRIDGE`) and
`GCOV_PREFIX`/`GCOV_PREFIX_STRIP` pointing every worker's .gcda files into one run directory
(the bridge's workers write and clear their counters after every request and on a crash's
signal: `AGXFUZZ_COVERAGE` in `fuzz/mesa/c/bridge.c`), then reads the system `gcov
--json-format` over the pass files (`PASS_FILES`). `agx_register_allocate.c` is compiled a
second time into the bridge's `demand.c`; the two units' counts are added line by line.

`Coverage.regions()` lists what no program reached: runs of unexecuted lines inside one
function (lines gcov does not count, blank or a comment, do not break a run), largest first,
each with the function's name; a function never entered is one region, marked so. They are
where the generator must go next (docs/mesa.md, "Coverage of Mesa's passes").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from fuzz.commands.errors import UsageError
from fuzz.mesa.build import MesaBuildError, build_bridge

PASS_FILES = ("agx_optimizer", "agx_opt_cse", "agx_dce", "agx_register_allocate",
              "agx_lower_parallel_copy", "agx_lower_pseudo", "agx_pressure_schedule",
              "agx_liveness", "agx_validate")
# Units whose counts add to a pass file's: demand.c includes agx_register_allocate.c
EXTRA_UNITS = {"demand": "agx_register_allocate"}


class CoverageError(Exception):
    """One line: gcov missing, the campaign failed, no counters written."""


@dataclass
class Region:
    file: str
    start: int
    end: int
    function: str
    lines: int  # counted (instrumented) lines in it
    whole_function: bool = False

    def __str__(self) -> str:
        what = f"{self.function} (never entered)" if self.whole_function else self.function
        return f"{self.file}.c:{self.start}-{self.end} {what}: {self.lines} lines"


@dataclass
class FileCoverage:
    name: str  # agx_optimizer
    lines: dict[int, int] = field(default_factory=dict)  # line: count
    function_of: dict[int, str] = field(default_factory=dict)  # line: function
    branches: dict[tuple[int, int], int] = field(default_factory=dict)  # (line, k): count
    functions: dict[str, int] = field(default_factory=dict)  # name: times entered

    @property
    def lines_hit(self) -> int:
        return sum(1 for count in self.lines.values() if count)

    @property
    def branches_hit(self) -> int:
        return sum(1 for count in self.branches.values() if count)

    def regions(self) -> list[Region]:
        out: list[Region] = []
        run: list[int] = []

        def close() -> None:
            if run:
                function = self.function_of.get(run[0], "?")
                whole = self.functions.get(function, 1) == 0
                out.append(Region(self.name, run[0], run[-1], function, len(run), whole))
                run.clear()

        for line in sorted(self.lines):
            if self.lines[line]:
                close()
                continue
            if run and self.function_of.get(line) != self.function_of.get(run[0]):
                close()
            run.append(line)
        close()
        return sorted(out, key=lambda r: (-r.lines, r.file, r.start))

    def add(self, record: dict, *, copy: bool = False) -> None:
        """One gcov JSON `files` entry for this source file, added in. `copy`: a second
        unit compiling the file (its functions renamed): its counts add to known lines."""
        for line in record["lines"]:
            number = line["line_number"]
            if copy and number not in self.lines:
                continue
            self.lines[number] = self.lines.get(number, 0) + line["count"]
            if line.get("function_name") and not copy:
                self.function_of.setdefault(number, line["function_name"])
            for k, branch in enumerate(line.get("branches", ())):
                key = (number, k)
                self.branches[key] = self.branches.get(key, 0) + branch["count"]
        for function in () if copy else record["functions"]:
            name = function["name"]
            self.functions[name] = self.functions.get(name, 0) + function["execution_count"]


@dataclass
class Coverage:
    files: dict[str, FileCoverage]
    programs: str = ""  # the campaign's budget, as asked
    command: str = ""

    def regions(self) -> list[Region]:
        regions = [r for f in self.files.values() for r in f.regions()]
        return sorted(regions, key=lambda r: (-r.lines, r.file, r.start))

    def region_of(self, function: str) -> Region | None:
        return next((r for r in self.regions() if r.function == function), None)

    def format(self, top: int = 20) -> str:
        rows = [f"{'file':<28} {'lines':>15} {'branches':>15}"]
        total = [0, 0, 0, 0]
        for name in PASS_FILES:
            f = self.files.get(name)
            if f is None:
                continue
            counts = (f.lines_hit, len(f.lines), f.branches_hit, len(f.branches))
            total = [a + b for a, b in zip(total, counts, strict=True)]
            rows.append(f"{name + '.c':<28} {_rate(*counts[:2]):>15} {_rate(*counts[2:]):>15}")
        rows.append(f"{'all':<28} {_rate(*total[:2]):>15} {_rate(*total[2:]):>15}")
        regions = self.regions()
        rows.append(f"uncovered regions: {len(regions)}, the {min(top, len(regions))} "
                    "largest (where the generator must go next):")
        rows += [f"  {region}" for region in regions[:top]]
        return "\n".join(rows)

    def to_json(self) -> dict:
        return {
            "command": self.command,
            "files": {name: {"lines": [f.lines_hit, len(f.lines)],
                             "branches": [f.branches_hit, len(f.branches)]}
                      for name, f in self.files.items()},
            "regions": [vars(r) for r in self.regions()],
        }


def _rate(hit: int, total: int) -> str:
    return f"{hit}/{total} {100 * hit / total:.1f}%" if total else "-"


def _gcov() -> str:
    gcov = os.environ.get("GCOV") or shutil.which("gcov")
    if not gcov:
        raise CoverageError("agxfuzz: gcov not found (install gcc's gcov, or set GCOV)")
    return gcov


def read_counters(run: Path, notes: Path) -> dict[str, FileCoverage]:
    """The pass files' coverage from the .gcda files in `run` and the .gcno in `notes`."""
    wanted = {*PASS_FILES, *EXTRA_UNITS}
    files: dict[str, FileCoverage] = {}
    gcov = _gcov()
    def unit_of(gcda: Path) -> str:
        return gcda.stem.split("_", 1)[1]

    # the copies after the files they copy
    for gcda in sorted(run.glob("*.gcda"), key=lambda p: (unit_of(p) in EXTRA_UNITS, p.name)):
        unit = unit_of(gcda)
        if unit not in wanted:
            continue
        shutil.copy2(notes / f"{gcda.stem}.gcno", run / f"{gcda.stem}.gcno")
        done = subprocess.run([gcov, "-b", "--json-format", "--stdout", gcda.name], cwd=run,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise CoverageError(f"agxfuzz: gcov failed on {gcda.name}: {last}")
        source = EXTRA_UNITS.get(unit, unit)
        for document in done.stdout.splitlines():
            if not document.strip():
                continue
            for record in json.loads(document)["files"]:
                if Path(record["file"]).name == f"{source}.c":
                    files.setdefault(source, FileCoverage(source)).add(
                        record, copy=unit in EXTRA_UNITS)
    return files


def measure(*, examples: int | None = None, time: float | None = None, seed: int = 1,
            jobs: int = 1, mesa_src: str | None = None, keep: Path | None = None,
            bridge=None, pressure: int = 0, echo=None) -> Coverage:
    """A `run --mesa` campaign on the gcov bridge, and what it covered. `keep`: the run
    directory (the .gcda files and the campaign's findings), else a temporary one.
    `bridge`: the gcov bridge already built (else built, or found in the cache, now); the
    campaign looks for the clean bridge in the cache that one lives in. `pressure`: one
    program in K gets a pressure block (`fuzz.mesa.translatable.add_pressure`)."""
    if mesa_src:
        os.environ["AGXFUZZ_MESA_SRC"] = os.path.abspath(mesa_src)
    _gcov()
    bridge = bridge if bridge is not None else build_bridge(coverage=True)
    notes = bridge.path.parent / "gcno"
    strip = (notes / "strip").read_text().strip()
    budget = ["--examples", str(examples)] if examples is not None else ["--time", str(time)]
    with tempfile.TemporaryDirectory(prefix="agxfuzz-mesa-coverage-") as tmp:
        run = Path(keep) if keep is not None else Path(tmp)
        run.mkdir(parents=True, exist_ok=True)
        for old in run.glob("*.gcda"):  # counters add up: a kept directory starts clean
            old.unlink()
        argv = ["run", "--mesa", str(bridge.mesa_src), *budget, "--seed", str(seed),
                "--jobs", str(jobs), "--out", str(run / "findings"), "--no-reduce",
                "--coverage-every", "0"]
        env = dict(os.environ, AGXFUZZ_MESA_BRIDGE=str(bridge.path), GCOV_PREFIX=str(run),
                   GCOV_PREFIX_STRIP=strip,  # <cache>/agxfuzz/mesa/<key>/<binary>
                   XDG_CACHE_HOME=str(bridge.path.parents[3]),
                   AGXFUZZ_MESA_PRESSURE=str(pressure))
        done = subprocess.run([sys.executable, "-c", "import sys; from fuzz.cli import main; "
                               "sys.exit(main(sys.argv[1:]))", *argv], env=env,
                              capture_output=True, text=True, check=False)
        if echo is not None:
            echo(done.stdout)
        if done.returncode not in (0, 1):  # 1: the campaign had findings
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise CoverageError(f"agxfuzz: the coverage campaign failed: {last}")
        files = read_counters(run, notes)
    if not files:
        raise CoverageError("agxfuzz: the campaign wrote no coverage counters")
    command = " ".join(["agxfuzz run --mesa", *argv[3:-5]])
    if pressure:
        command = f"AGXFUZZ_MESA_PRESSURE={pressure} {command}"
    return Coverage(files, " ".join(budget), command)


def run_coverage_command(args) -> int:
    """`agxfuzz mesa coverage`."""
    if args.examples is None and args.time is None:
        args.time = 60.0
    try:
        coverage = measure(examples=args.examples, time=args.time, seed=args.seed,
                           jobs=args.jobs, mesa_src=args.mesa_src, pressure=args.pressure,
                           keep=Path(args.keep) if args.keep else None)
    except (MesaBuildError, CoverageError) as error:
        raise UsageError(str(error)) from None
    print(f"Mesa pass coverage after {coverage.command}:")
    print(coverage.format(args.regions))
    if args.json:
        Path(args.json).write_text(json.dumps(coverage.to_json(), indent=1) + "\n")
    return 0
