"""`agxfuzz reduce`: shrink a failing `.agx` file to a small program that fails the same way.

The failure to keep is the one `agxfuzz check` would report for the same flags (a pass's
failure before the input's own liveness finding; `--oracle` narrows it). The reduced
program goes to OUT (default: FILE with `.reduced.agx`), rewritten atomically after every
improvement, so Ctrl-C or a time budget always leaves the smallest reproducer found so far.
FILE itself is only ever read.

Without --passes, FILE is checked as `check` checks it: the pipelines for its level (an
exec-level file skips the lowering to exec). A finding's `NAME.inputs.json` beside FILE is
its input set unless --inputs or --seed is given. Every check runs in a supervised child
(`fuzz.processes.check_supervised`), as in `run`: a pass that exits, kills its process,
hangs or outgrows its memory is a finding of the candidate, never reduce's own death.
Exit 0: a reproducer written; 1: FILE does not fail (nothing to reduce, nothing written).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

from agxir.text import print_function
from fuzz.commands.errors import UsageError, UserError
from fuzz.commands.isolation import check_isolated, pass_memory
from fuzz.commands.loaders import load_function, read_text, seeded_input_sets
from fuzz.commands.repro import path_beside
from fuzz.commands.units import units_under_test
from fuzz.findings import write_atomically
from fuzz.harness import ORACLES, Harness
from fuzz.passes_under_test import replay_arguments
from fuzz.processes import recorded_memory_limit
from fuzz.reduce.deltas import Case
from fuzz.reduce.reducer import Reducer, SameFailure, choose_failure, size_of
from oracles.inputs import random_input_sets


def default_out(path: str) -> Path:
    """`dir/name.agx` -> `dir/name.reduced.agx` (any other name gets the suffix appended)."""
    file = Path(path)
    stem = file.name[: -len(".agx")] if file.name.endswith(".agx") else file.name
    return file.with_name(stem + ".reduced.agx")


def inputs_path(out: Path) -> Path:
    stem = out.name[: -len(".agx")] if out.name.endswith(".agx") else out.name
    return out.with_name(stem + ".inputs.json")


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)  # hard links, bind mounts
    except OSError:
        return False


def _check_outputs(args, out: Path) -> Path:
    """Refuse any output path that is one of the user's own files."""
    sidecar = inputs_path(out)
    theirs = [Path(args.file)] + ([Path(args.inputs)] if args.inputs else [])
    for ours in (out, sidecar):
        for their in theirs:
            if _same_file(ours, their):
                raise UsageError(
                    f"agxfuzz reduce: refusing to write {ours} over the input {their}; "
                    "choose another -o/--out"
                )
    return sidecar


def _pipeline_text(pipeline) -> str:
    return " -> ".join(step.name for step in pipeline) or "(no passes)"


def _replay(out: Path, pipeline, input_flags: list[str]) -> str:
    if not pipeline:  # the input's own liveness finding: `liveness` exits 1 while it fails
        return shlex.join(["agxfuzz", "liveness", str(out)])
    return shlex.join(["agxfuzz", "check", str(out), *replay_arguments(pipeline), *input_flags])


class _Writer:
    """Writes a case to OUT (and its inputs next to it when they are not what the original
    flags regenerate), with a header saying what it reproduces."""

    def __init__(self, args, out: Path, sidecar: Path, original, target) -> None:
        self.args = args
        self.out = out
        self.sidecar = sidecar
        self.original = original
        self.original_size = size_of(original)
        self.target = target
        self.finding = target
        self.writes = 0

    def input_flags(self, case) -> tuple[list[str], bool]:
        """Flags replaying `case`'s inputs, and whether they need the sidecar file."""
        args = self.args
        if args.inputs:
            if case.inputs == self.original.inputs:
                return ["--inputs", args.inputs], False
        else:
            again = random_input_sets(case.fn, args.threads, args.seed, args.sets)
            if tuple(again) == case.inputs:
                return ["--threads", str(args.threads), "--sets", str(args.sets),
                        "--seed", str(args.seed)], False
        return ["--inputs", str(self.sidecar)], True

    def write(self, case) -> str:
        try:
            return self._write(case)
        except OSError as error:
            raise UsageError(f"{self.out}: cannot write: {error.strerror or error}") from None

    def _write(self, case) -> str:
        flags, sidecar = self.input_flags(case)
        if sidecar:
            data = [input_set.to_json() for input_set in case.inputs]
            write_atomically(self.sidecar, json.dumps(data, indent=1) + "\n")
        finding = self.finding
        limit = recorded_memory_limit(finding.oracle, finding.message)
        if limit:  # a memory-limit finding replays under the limit it was found under
            flags = ["--pass-memory", str(limit), *flags]
        command = _replay(self.out, case.pipeline, flags)
        header = [
            f"; agxfuzz reduce: a reduced reproducer of {self.args.file}",
            f"; pipeline: {_pipeline_text(case.pipeline)}",
            f"; failure: {finding.pass_name} failed the {finding.oracle} oracle",
            f"; message: {finding.message}",
            f"; size: {self.original_size.describe()}",
            f";   ->  {size_of(case).describe()}",
            f"; replay: {command}",
        ]
        write_atomically(self.out, "\n".join(header) + "\n" + print_function(case.fn))
        self.writes += 1
        return command


def _print_stats(reducer, seconds: float, calls: int) -> None:
    print(f"{'delta pass':<20} {'attempts':>8} {'accepted':>8} {'invalid':>8} {'seconds':>8}")
    for name, stats in reducer.stats.items():
        print(f"{name:<20} {stats.attempts:>8} {stats.successes:>8} {stats.invalid:>8} "
              f"{stats.seconds:>8.2f}")
    print(f"{reducer.rounds} rounds, {calls} programs checked, {seconds:.1f} s")


def _from_record(args) -> None:
    """FILE may be a finding's record (`NAME.json`), or a reproducer with its record beside
    it: without --passes, --pass or --pass-cmd the record's flags are the pipeline. The
    finding's input set (`NAME.inputs.json`, as `run`, `check --out` and `reduce` write it)
    is used unless --inputs or --seed is given."""
    path = Path(args.file)
    record_path = path if path.suffix == ".json" else path.with_suffix(".json")
    record = None
    if record_path.is_file():
        try:
            record = json.loads(read_text(str(record_path)))
            if not (isinstance(record, dict) and isinstance(record.get("file"), str)
                    and isinstance(record.get("flags"), list)):
                record = None
        except ValueError:
            record = None
    if record is None:
        if path.suffix == ".json":
            raise UsageError(f"{args.file}: not a finding record (give its .agx reproducer, "
                             "or the .json `run` wrote beside it)")
    else:
        if path.suffix == ".json":
            args.file = path_beside(record["file"], record_path.parent)
            print(f"reproducer: {args.file} (from {record_path})")
        if args.passes is None and not args.python_passes and not args.pass_commands:
            flags = [str(flag) for flag in record["flags"]]
            for flag, value in zip(flags[::2], flags[1::2]):
                if flag == "--passes":
                    args.passes = value
                elif flag == "--pass":
                    args.python_passes = [*(args.python_passes or []), value]
                elif flag == "--pass-cmd":
                    args.pass_commands = [*(args.pass_commands or []), value]
            if flags:
                print(f"passes: {shlex.join(flags)} (from {record_path})")
    if args.inputs is None and args.seed is None:
        beside = inputs_path(Path(args.file))
        if beside.is_file():
            args.inputs = str(beside)
            print(f"inputs: {beside} (beside {args.file}; --seed draws random ones instead)")


def _failure(args, fn, sets):
    """Check FILE as `check` would (the passes given in order, or the pipelines `check`
    runs for the file's level), each in a supervised child; the failure to keep and the
    pipeline (of passes under test) that shows it."""
    units, pipelines = units_under_test(args, fn.level)
    given = args.passes is not None or args.python_passes or args.pass_commands
    runs = [units] if given else pipelines
    findings = check_isolated(Harness(sets), fn, runs, memory_mb=pass_memory(args))
    target = choose_failure(findings, args.oracle)
    if target is None:
        how = f" the {args.oracle} oracle" if args.oracle else ""
        under = (_pipeline_text(units) if given else
                 f"the {len(runs)} pipelines `check` runs at the {fn.level} level")
        raise UserError(f"{args.file} does not fail{how} under {under}: nothing to reduce")
    by_name = {unit.name: unit for run in runs for unit in run}
    return target, tuple(by_name[name] for name in target.pipeline)


def run_reduce(args) -> int:
    if args.oracle is not None and args.oracle not in ORACLES:
        raise UsageError(
            f"agxfuzz reduce: unknown oracle {args.oracle!r}; oracles: {', '.join(ORACLES)}"
        )
    pass_memory(args)  # a limit below the floor is refused before anything runs
    _from_record(args)
    out = Path(args.out) if args.out else default_out(args.file)
    fn = load_function(args.file)
    sidecar = _check_outputs(args, out)
    sets = seeded_input_sets(fn, args)
    target, pipeline = _failure(args, fn, sets)
    case = Case(fn, tuple(sets), pipeline)
    # Every candidate in a supervised child, as `run` checks programs: a pass that exits,
    # kills its process, hangs or outgrows --pass-memory is the candidate's finding.
    test = SameFailure(target, supervised=True, memory_mb=pass_memory(args))
    print(f"{args.file}: {target.pass_name}: {target.oracle}: {target.message}")
    print(f"reducing {size_of(case).describe()}", flush=True)

    writer = _Writer(args, out, sidecar, case, target)
    writer.write(case)  # at once: an unwritable OUT fails now, and OUT exists from here on

    def improved(best) -> None:
        reducer_finding = reducer.finding
        if reducer_finding is not None:
            writer.finding = reducer_finding
        writer.write(best)

    started = time.monotonic()
    reducer = Reducer(case, test, on_improve=improved, seconds=args.timeout)
    best = reducer.run()
    if reducer.finding is not None:
        writer.finding = reducer.finding
    command = writer.write(best)  # again: Ctrl-C may have landed in the middle of a write
    seconds = time.monotonic() - started

    _print_stats(reducer, seconds, test.calls)
    print(f"reduced: {size_of(case).describe()}")
    print(f"     ->  {size_of(best).describe()}")
    print(f"written: {out}")
    print(f"replay: {command}")
    if reducer.interrupted:
        print(f"interrupted: kept the smallest reproducer so far in {out}")
        return 130
    if reducer.timed_out:
        print(f"time budget of {args.timeout:g} s used up: kept the smallest reproducer so far "
              f"in {out}")
    return 0
