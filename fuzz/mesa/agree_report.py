"""The report of `agxfuzz mesa agree` (`fuzz.mesa.agree` compares one program): the
optimizer table per rewrite kind, the smallest program of each class, the meaning
differences written as findings, the allocators' helped/HURT table, and the command.

`agree(seed, examples)` runs both comparisons on the same programs and returns an
`Agreement`; `format_agreement` prints it; `reduce_class` shrinks a class's smallest
program with the project's reducer; `compare_allocators` runs the model's
`ra, lower-phis, lower-copies` and Mesa's `mesa:ra, mesa:lower-copies` on the same DCE'd
exec program and `ra_summary` reports moves, swaps, halves, threads and instructions
helped/HURT with `fuzz.stats.report`'s paired bootstrap. `run_agree_command(args)` is the
command:
exit 0 when no two outputs differ in meaning, 1 when some do (each written as a finding,
atomically, under `--out`), 2 on a usage error (a Mesa tree that does not build, a bridge
that does not start).
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agxir.ir import Function, Register, clone_function
from agxir.machine.lower_cf import structurable
from agxir.machine.pressure import machine_stats
from agxir.opcodes.table import BITOP_ALIASES
from agxir.text import parse_function, print_function
from fuzz.commands.errors import UsageError
from fuzz.findings import FindingStore, write_atomically
from fuzz.harness import Finding
from fuzz.mesa.agree import (
    CLASSES,
    KINDS,
    MESA_PIPELINE,
    MODEL_ONLY,
    MODEL_PIPELINE,
    ProgramResult,
    by_kind,
    changes,
    classify,
    compare_program,
    exec_cases,
    run_mesa,
    run_model,
    without_the_dead,
)
from fuzz.mesa.build import MesaBuildError, build_bridge
from fuzz.mesa.client import BridgeError
from fuzz.mesa.translatable import blockers
from fuzz.passes_under_test import registered
from fuzz.reduce import Case, Reducer
from fuzz.stats.report import bootstrap_ci, bootstrap_weights, relative

MODEL_RA = ("ra", "lower-phis", "lower-copies")
MESA_RA = ("mesa:ra", "mesa:lower-copies")
RA_METRICS = ("moves", "swaps", "halfregs", "threads", "instrs")


@dataclass
class Agreement:
    seed: int
    programs: int = 0
    skipped: Counter = field(default_factory=Counter)  # Mesa's crash text -> programs
    classes: dict = field(default_factory=dict)  # kind -> Counter(class -> programs)
    meaning: Counter = field(default_factory=Counter)  # kind -> programs differing in meaning
    rules: dict = field(default_factory=dict)  # kind -> Counter(model rule -> hits)
    smallest: dict = field(default_factory=dict)  # (kind, class) -> ProgramResult
    differences: list = field(default_factory=list)  # ProgramResults differing in meaning
    model_only: Counter = field(default_factory=Counter)  # MODEL_ONLY pass -> programs
    ra_rows: list = field(default_factory=list)  # (index, model metrics, Mesa metrics)
    ra_failed: Counter = field(default_factory=Counter)  # "side: reason" -> programs
    ssa_texts: dict = field(default_factory=dict)  # index -> the SSA program's text
    reduced: dict = field(default_factory=dict)  # (kind, class) -> the reduced SSA text

    def add(self, result: ProgramResult) -> None:
        self.programs += 1
        if result.skipped:
            self.skipped[result.skipped] += 1
            return
        disagreeing = [k for k, c in result.classes.items() if c != "both"]
        for kind, found in result.classes.items():
            self.classes.setdefault(kind, Counter())[found] += 1
            if found != "both":
                best = self.smallest.get((kind, found))
                if best is None or result.size < best.size:
                    self.smallest[kind, found] = result
            if result.meaning and (kind in disagreeing or not disagreeing):
                self.meaning[kind] += 1
        for (pass_name, rule), hits in result.rule_hits.items():
            kind = next((k for k, (_, p) in KINDS.items() if p == pass_name), "other")
            self.rules.setdefault(kind, Counter())[rule] += hits
        self.model_only.update(result.model_only_passes)
        if result.meaning:
            self.differences.append(result)


# --- allocators ---------------------------------------------------------------------------
def _moves(fn: Function) -> int:
    return sum(1 for ins in fn.instructions()
               if ins.name == "bitop" and ins.attrs.get("tt") == BITOP_ALIASES["mov"])


def _swaps(fn: Function) -> int:
    """Swaps as the copy lowerings emit them: three xors of two registers into one of
    them, or (Mesa, the two halves of one register) `extr r, r, r`."""
    xors = extrs = 0
    for ins in fn.instructions():
        registers = [s.ref for s in ins.srcs if isinstance(s.ref, Register)]
        if not isinstance(ins.dest, Register) or ins.dest not in registers:
            continue
        if ins.name == "bitop" and ins.attrs.get("tt") == BITOP_ALIASES["xor"]:
            xors += 1
        elif ins.name == "extr" and len(set(registers)) == 1:
            extrs += 1
    return xors // 3 + extrs


def allocation_metrics(fn: Function, passes, moves_before: int) -> tuple[int, ...]:
    """(moves inserted, swaps, halves used, threads per core, instructions) of `fn` (the
    exec-level program) allocated by `passes`; raises what they raise."""
    work = clone_function(fn)
    for name in passes:
        registered(name).run(work)
    stats = machine_stats(work)
    instrs = sum(1 for ins in work.instructions() if not ins.is_phi)  # Mesa's kept phis
    return (_moves(work) - moves_before, _swaps(work), stats.halfregs, stats.threads, instrs)


def compare_allocators(agreement: Agreement, index: int, fn: Function) -> None:
    """The model's allocator and Mesa's on `fn` after Mesa's DCE (agx_ra's contract), the
    same input for both."""
    work = clone_function(fn)
    try:
        registered("mesa:dce").run(work)
    except Exception as error:
        agreement.ra_failed[f"mesa:dce: {type(error).__name__}"] += 1
        return
    before = _moves(work)
    got = []
    for side, passes in (("model", MODEL_RA), ("Mesa", MESA_RA)):
        try:
            got.append(allocation_metrics(work, passes, before))
        except Exception as error:
            agreement.ra_failed[f"{side}: {type(error).__name__}"] += 1
            return
    agreement.ra_rows.append((index, *got))


def ra_summary(rows, seed: int) -> dict:
    """Per metric: totals (model, Mesa), the relative change model -> Mesa with a 95%
    paired-bootstrap interval, and the programs where Mesa is better (helped) or worse
    (HURT); fewer is better except threads."""
    out = {}
    weights = bootstrap_weights(len(rows), seed) if rows else None
    for column, metric in enumerate(RA_METRICS):
        model = np.array([r[1][column] for r in rows], dtype=np.int64)
        mesa = np.array([r[2][column] for r in rows], dtype=np.int64)
        sign = 1 if metric == "threads" else -1
        gain = sign * (mesa - model)
        change = relative(int(model.sum()), int(mesa.sum())) if rows else 0.0
        out[metric] = {
            "model": int(model.sum()), "mesa": int(mesa.sum()),
            "change": change if math.isfinite(change) else None,
            "ci95": bootstrap_ci(model, mesa, weights) if rows else None,
            "helped": int((gain > 0).sum()), "hurt": int((gain < 0).sum()),
        }
    return out


# --- the smallest program of a class --------------------------------------------------------
def classes_of(ssa: Function) -> dict[str, str] | None:
    """Each kind's class on the SSA program `ssa` (None when it cannot be compared: not
    structurable, not translatable, Mesa refusing or crashing)."""
    try:
        if structurable(ssa) is not None or blockers(ssa):
            return None
        fn = clone_function(ssa)
        registered("lower-cf").run(fn)
        theirs, mine = without_the_dead(changes(fn, run_mesa(fn)),
                                        changes(fn, run_model(ssa)[0]))
        theirs, mine = by_kind(theirs), by_kind(mine)
    except Exception:
        return None
    found = {k: classify(mine.get(k, set()), theirs.get(k, set())) for k in KINDS}
    return {k: c for k, c in found.items() if c}


def reduce_class(ssa: Function, inputs, kind: str, found: str, attempts: int) -> Function:
    """`ssa` shrunk by the project's reducer while `kind` stays in class `found`."""
    tried = [0]

    def interesting(case: Case) -> bool:
        tried[0] += 1  # a budget in candidates, so the result does not depend on the load
        if tried[0] > attempts:
            return False
        classes = classes_of(case.fn)
        return bool(classes) and classes.get(kind) == found

    case = Case(clone_function(ssa), tuple(inputs[:1]), ())
    return Reducer(case, interesting).run().fn


# --- the run ------------------------------------------------------------------------------
def agree(seed: int, examples: int, *, allocators: bool = True, progress=None,
          mesa_run=None, model_run=None, reduce_attempts: int = 0) -> Agreement:
    """`examples` programs of `seed` through both sides; with `reduce_attempts`, the
    smallest program of each class is then reduced (that many candidates at most each)."""
    agreement = Agreement(seed)

    cases = {}
    for index, ssa, fn, inputs in exec_cases(seed, examples):
        cases[index] = inputs
        result = compare_program(index, ssa, fn, inputs, mesa_run=mesa_run,
                                 model_run=model_run)
        result.ssa_text = print_function(ssa)
        agreement.ssa_texts[index] = result.ssa_text
        agreement.add(result)
        if allocators:
            compare_allocators(agreement, index, fn)
        if progress:
            progress(agreement)
    if reduce_attempts:
        for (kind, found), result in sorted(agreement.smallest.items()):
            ssa = parse_function(result.ssa_text)
            reduced = reduce_class(ssa, cases[result.index], kind, found, reduce_attempts)
            agreement.reduced[kind, found] = print_function(reduced)
    return agreement


def _percent(x) -> str:
    return "n/a" if x is None else f"{x * 100:+.2f}%"


def format_agreement(a: Agreement, command: str) -> str:
    lines = [f"$ {command}", f"agxfuzz mesa agree: seed {a.seed}, {a.programs} programs "
             f"({sum(a.skipped.values())} not compared)"]
    for text, count in sorted(a.skipped.items()):
        lines.append(f"  not compared, {count}: {text}")
    lines += ["", f"optimizer: model {' -> '.join(MODEL_PIPELINE)} (on SSA, then lower-cf) "
              f"vs Mesa {' -> '.join(MESA_PIPELINE)} (on lower-cf's output)", "",
              "| kind | Mesa 23.3.6 | model pass: rules fired (hits) | programs | both | "
              "model only | Mesa only | different | meaning differs |",
              "|---|---|---|---|---|---|---|---|---|"]
    for kind, (mesa, model) in KINDS.items():
        found = a.classes.get(kind, Counter())
        if not found and kind == "other":
            continue
        rules = ", ".join(f"{r} {n}" for r, n in sorted(a.rules.get(kind, {}).items()))
        model_cell = f"`{model}`: {rules}" if rules else (f"`{model}`" if model != "-" else "-")
        lines.append(f"| {kind} | `{mesa}` | {model_cell} | {sum(found.values())} | "
                     + " | ".join(str(found.get(c, 0)) for c in CLASSES)
                     + f" | {a.meaning.get(kind, 0)} |")
    for name, why in MODEL_ONLY.items():
        lines.append(f"| {name} | none: {why} | `{name}` (alone) | {a.model_only.get(name, 0)} "
                     f"| - | {a.model_only.get(name, 0)} | - | - | - |")
    if a.ra_rows or a.ra_failed:
        lines += ["", f"allocators: model {', '.join(MODEL_RA)} vs Mesa {', '.join(MESA_RA)}, "
                  f"both after mesa:dce; {len(a.ra_rows)} programs allocated by both"
                  + "".join(f"; {n} failed ({r})" for r, n in sorted(a.ra_failed.items())),
                  "(change: Mesa's total against the model's; helped: Mesa better, HURT: Mesa "
                  "worse; fewer is better except threads)", "",
                  "| metric | model | Mesa | change | 95% CI (bootstrap) | helped | HURT |",
                  "|---|---|---|---|---|---|---|"]
        for metric, s in ra_summary(a.ra_rows, a.seed).items():
            ci = f"[{_percent(s['ci95'][0])}, {_percent(s['ci95'][1])}]" if s["ci95"] else "n/a"
            lines.append(f"| {metric} | {s['model']} | {s['mesa']} | {_percent(s['change'])} "
                         f"| {ci} | {s['helped']} | {s['hurt']} |")
    if a.smallest:
        lines += ["", "smallest program of each class (instructions at the exec level):"]
        for (kind, found), r in sorted(a.smallest.items()):
            only = sorted((r.model_sites - r.mesa_sites) if found != "Mesa only"
                          else set()) + sorted((r.mesa_sites - r.model_sites)
                                               if found != "model only" else set())
            shown = [f"{'model' if s in r.model_sites else 'Mesa'}: {s[1]} {s[2]}"
                     for s in only if s[0] == kind][:4]
            lines.append(f"  {kind} / {found}: program {r.index} ({r.size}); "
                         + "; ".join(shown))
            if (kind, found) in a.reduced:
                lines += ["    " + line for line in a.reduced[kind, found].splitlines()]
    lines.append("")
    if a.differences:
        lines.append(f"{len(a.differences)} programs where the outputs differ in meaning:")
        for r in a.differences:
            lines.append(f"  program {r.index}: {r.meaning}; wrong: {r.wrong}")
    else:
        lines.append("no two outputs differ in meaning")
    return "\n".join(lines)


def to_json(a: Agreement) -> dict:
    return {
        "seed": a.seed, "programs": a.programs, "mesa_crashed": dict(a.skipped),
        "classes": {k: dict(v) for k, v in a.classes.items()},
        "meaning_differs": dict(a.meaning), "rules": {k: dict(v) for k, v in a.rules.items()},
        "model_only": dict(a.model_only),
        "smallest": {f"{k}/{c}": {"program": r.index, "instructions": r.size, "text": r.text,
                                  "model": r.model_output, "mesa": r.mesa_output,
                                  "reduced": a.reduced.get((k, c))}
                     for (k, c), r in a.smallest.items()},
        "differences": [{"program": r.index, "meaning": r.meaning, "wrong": r.wrong}
                        for r in a.differences],
        "allocators": ra_summary(a.ra_rows, a.seed), "allocators_failed": dict(a.ra_failed),
    }


def write_findings(a: Agreement, out: str) -> list:
    """Each meaning difference as a finding against the side that is wrong (both, when
    neither output refines the input), replayable with `agxfuzz check`."""
    store = FindingStore(out, lambda finding: ["--passes", ",".join(finding.pipeline)])
    written = []
    seen = set()  # one finding per signature, as a campaign writes them
    for r in a.differences:
        sides = []
        if "Mesa" in r.wrong:
            sides.append(("mesa:optimizer", ("lower-cf", *MESA_PIPELINE)))
        if "model" in r.wrong:
            sides.append((MODEL_PIPELINE[0], MODEL_PIPELINE))
        for name, pipeline in sides or [("mesa:optimizer", ("lower-cf", *MESA_PIPELINE))]:
            finding = Finding(name, "refinement", f"agree: {r.meaning} ({r.wrong} wrong)",
                              tuple(pipeline), r.ssa_text, r.input_set)
            if finding.signature in seen:
                continue
            seen.add(finding.signature)
            written.append(store.write(finding, seed=a.seed, index=r.index))
    return written


def run_agree_command(args) -> int:
    """`agxfuzz mesa agree`."""
    if args.examples < 1:
        raise UsageError("agxfuzz: --examples must be at least 1")
    if args.mesa_src:
        os.environ["AGXFUZZ_MESA_SRC"] = os.path.abspath(args.mesa_src)
    try:
        if not os.environ.get("AGXFUZZ_MESA_BRIDGE"):
            build_bridge()
        # Loaded late: fuzz.mesa.passes sits in the harness's import circle.
        from fuzz.mesa.passes import client

        bridge = client()
        if bridge.process is None:
            bridge.start()
    except (MesaBuildError, BridgeError, OSError) as error:
        raise UsageError(f"agxfuzz: the Mesa bridge is not available: "
                         f"{str(error).removeprefix('agxfuzz: ')}") from None
    command = shlex.join(["agxfuzz", "mesa", "agree", "--examples", str(args.examples),
                          "--seed", str(args.seed)]
                         + (["--reduce", str(args.reduce)] if args.reduce else [])
                         + (["--no-allocators"] if args.no_allocators else []))
    print(f"agxfuzz mesa agree: seed {args.seed} (replay: {command})", flush=True)
    agreement = agree(args.seed, args.examples, allocators=not args.no_allocators,
                      reduce_attempts=args.reduce)
    print(format_agreement(agreement, command))
    if args.json:
        write_atomically(Path(args.json), json.dumps(to_json(agreement), indent=1) + "\n")
    if agreement.differences:
        written = write_findings(agreement, args.out)
        print(f"{len(written)} findings (one per signature) in {args.out}:")
        for files in written:
            print(f"  {files.reproducer}\n    replay: {files.command}")
        return 1
    return 0


__all__ = ["Agreement", "agree", "format_agreement", "ra_summary",
           "run_agree_command", "to_json", "write_findings"]
