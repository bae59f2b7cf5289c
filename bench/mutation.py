"""The suite's own power: plant one small bug at a time in a pass module and see what notices.

    python bench/mutation.py [--modules agxir/passes/cmpsel.py,...] [--mutants-per-module K]
                             [--seed S] [--programs N] [--parallel P] [--no-tests]
                             [--test-timeout S] [--json OUT] [--work DIR] [--resume]

Mutants come from `bench/mutants.py` (compare flips, and/or swaps, `not` dropped, integer
constants +-1, `return True/False` swapped, slice bounds +-1, a statement dropped),
enumerated in source order and sampled with `--seed` (a larger K extends a smaller one's
sample). Default modules: every pass module in agxir/passes and agxir/machine, with the
helpers only passes import (uses, pass_, schedule_deps, ra_file, structure, occupancy); not
the registries (`__init__`, `pipeline`), the opcode tables, the text form, the machine
verifier (an oracle) or the statistics.

The tree is copied once (rsync to WORK/base, no .git); each mutant is a hard-linked copy of
it with the one file rewritten, run with PYTHONPATH on the copy (the child checks that the
copy's modules are the ones imported). Per mutant:

(a) the default campaign as `agxfuzz run --examples N --seed 1 --jobs 1 --fail-fast
    --no-reduce` runs it (guidance on, coverage sampled 1 in 20), restricted to the default
    campaign's pipelines that contain a pass whose module imports the mutated one (a static
    import graph; registries not followed). A module the checking code itself imports (the
    harness, oracles, generator) gets every pipeline, unless that code runs only in the
    machine pipelines (`CONDITIONAL`: then those pipelines are added). A finding = killed; it is replayed on
    the unmutated copy (`agxfuzz repro`) and a finding that fails there too is not a kill.
    Killed on the first program by a crash, or by an import error, is counted as trivial.
(b) for survivors of (a): the module's own tests (tests/<module's dir>/test_<module>*.py)
    and the goldens that mention one of its passes, with a timeout per mutant.

Prints per module: mutants, trivial, killed by the campaign, killed by campaign + tests,
and the survivors (file:line: the mutation); `--json` writes every mutant's record (written
after each mutant, so a run stopped early keeps what it measured; `--resume` skips the
mutants a previous run of the same commit and settings recorded there).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Lock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.mutants import enumerate_mutants, sample  # noqa: E402

HELPERS = ("agxir/passes/uses.py", "agxir/passes/pass_.py", "agxir/passes/schedule_deps.py",
           "agxir/machine/ra_file.py", "agxir/machine/structure.py",
           "agxir/machine/occupancy.py")
NOT_PASSES = {"__init__.py", "pipeline.py", "registry.py", "contract.py", "opcodes.py",
              "text.py", "verifier.py", "stats.py", "pressure.py", "paths.py"}
# Modules that import every pass: not followed
REGISTRIES = {"agxir.passes", "agxir.passes.registry", "agxir.machine.pipeline"}
CHECKER_ROOTS = ("fuzz.cli", "fuzz.commands.run", "fuzz.commands.units", "fuzz.campaign")
# Checking code that imports pass modules but runs only in pipelines holding a given pass:
# the demand oracle (steps that allocate from exec: ra, vreg-ra) reads
# agxir.machine.pressure, which imports regalloc; it runs only in the machine pipelines,
# which all start with lower-cf. (The harness's unstructurability question is
# oracles/structure_reference.py, which imports no pass, since issue 19.)
CONDITIONAL = {"agxir.machine.lower_cf": "lower-cf",
               "oracles.machine.pressure_oracle": "lower-cf"}
TRIVIAL_ORACLES = {"crash"}
HALF = 480  # programs: 30 s of the default campaign at the recorded 16 programs/s


def default_modules(root: Path) -> list[str]:
    out = []
    for directory in ("agxir/passes", "agxir/machine"):
        for path in sorted((root / directory).glob("*.py")):
            if path.name not in NOT_PASSES:
                out.append(f"{directory}/{path.name}")
    return out


# -- which pipelines can see a module ---------------------------------------------------------

def module_name(path: str) -> str:
    name = path[:-3].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere (module level or in a function)."""
    files = {module_name(str(p.relative_to(root))): p
             for top in ("agxir", "fuzz", "oracles") for p in (root / top).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                for i in range(1, len(parts) + 1):  # a submodule runs its packages too
                    if ".".join(parts[:i]) in files:
                        edges.add(".".join(parts[:i]))
        graph[name] = edges - {name}
    return graph


def closure(graph: dict[str, set[str]], roots, blocked=()) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name in blocked:
            continue
        seen.add(name)
        if name not in REGISTRIES:
            todo += graph.get(name, ())
    return seen


def default_plan(base: Path) -> dict:
    """From the copied tree: registered pass name -> the module its code lives in, and the
    default campaign's pipelines (pass names)."""
    done = subprocess.run([sys.executable, str(base / "bench" / "mutation.py"), "--child-plan"],
                          cwd=base, env=_environment(base), text=True, capture_output=True,
                          check=True)
    return json.loads(done.stdout)


def child_plan() -> int:
    import argparse as _argparse

    from agxir.passes.registry import CONTRACTS
    from fuzz.commands.units import units_under_test

    everything = units_under_test(_argparse.Namespace(passes=None, python_passes=None,
                                                      pass_commands=None))[1]
    print(json.dumps({
        "passes": {name: c.run.__module__ for name, c in CONTRACTS.items()},
        "pipelines": [[unit.name for unit in pipeline] for pipeline in everything],
    }))
    return 0


def affected_passes(path: str, graph, passes: dict[str, str]) -> list[str] | None:
    """The passes whose code imports the module (None: the checking code imports it too,
    so every pipeline may see the change). Checking code in `CONDITIONAL` adds its pass."""
    name = module_name(path)
    if name in closure(graph, CHECKER_ROOTS, blocked=set(CONDITIONAL)):
        return None
    found = {p for p, module in passes.items() if name in closure(graph, [module])}
    found |= {p for entry, p in CONDITIONAL.items() if name in closure(graph, [entry])}
    return sorted(found)


# -- one mutant ---------------------------------------------------------------------------------

def copy_base(source: Path, base: Path, commit: str | None) -> None:
    """The tree at `commit` (`git archive`: only reads the repository), or the working tree
    as it is (rsync) when `commit` is None."""
    base.parent.mkdir(parents=True, exist_ok=True)
    if commit is not None:
        if base.exists():
            shutil.rmtree(base)
        base.mkdir()
        archive = subprocess.run(["git", "-C", str(source), "archive", commit],
                                 stdout=subprocess.PIPE, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    else:
        subprocess.run(["rsync", "-a", "--delete", "--exclude", ".git", "--exclude", ".venv",
                        "--exclude", "findings", "--exclude", "__pycache__",
                        "--exclude", "*.egg-info", f"{source}/", f"{base}/"], check=True)
    for own in ("mutation.py", "mutants.py"):  # this bench, committed or not (not under test)
        shutil.copy(Path(__file__).parent / own, base / "bench" / own)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "agxir", "fuzz", "oracles",
                    "bench", "tests"], cwd=base, check=False, stdout=subprocess.DEVNULL)


def mutant_tree(base: Path, where: Path, path: str, text: str) -> None:
    """A hard-linked copy of `base` with `path` replaced (unlinked first: the base keeps its
    file) and its stale bytecode removed."""
    if where.exists():
        shutil.rmtree(where)
    subprocess.run(["cp", "-al", str(base), str(where)], check=True)
    target = where / path
    target.unlink()
    target.write_text(text)
    for stale in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        stale.unlink()


def _environment(tree: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    return env


def run_campaign(tree: Path, passes: list[str] | None, args, log: Path) -> dict:
    report = tree / "mutation-report.json"
    command = [sys.executable, str(tree / "bench" / "mutation.py"), "--child",
               "--child-passes", json.dumps(passes), "--programs", str(args.programs),
               "--campaign-seed", str(args.campaign_seed), "--child-report", str(report),
               "--child-out", str(tree / "mutation-findings")]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=tree, env=_environment(tree), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=args.campaign_timeout)
        output, rc = done.stdout, done.returncode
    except subprocess.TimeoutExpired as error:
        output, rc = (error.stdout or b"").decode(errors="replace") + "\n(timeout)", None
    log.write_text(output)
    result = {"seconds": round(time.monotonic() - started, 1), "rc": rc}
    if report.exists():
        result.update(json.loads(report.read_text()))
    else:
        result["error"] = output.strip().splitlines()[-1:] if output.strip() else ["(no output)"]
    return result


def replays_on_clean(base: Path, finding_file: str | None) -> bool | None:
    """Whether a finding also fails on the unmutated tree (True: a false kill)."""
    if not finding_file or not finding_file.endswith(".json"):
        return None
    done = subprocess.run([sys.executable, "-m", "fuzz", "repro", finding_file], cwd=base,
                          env=_environment(base), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=600)
    return done.returncode == 1


def test_targets(tree: Path, path: str, passes: list[str]) -> list[str]:
    directory, stem = Path("tests") / Path(path).parent, Path(path).stem
    tests = sorted(str(p.relative_to(tree)) for p in (tree / directory).glob(f"test_{stem}*.py"))
    goldens = []
    for golden in sorted((tree / "tests" / "golden").rglob("*.agx")):
        text = golden.read_text()
        if any(name in text for name in passes):
            goldens.append(golden.stem)
    if goldens:
        tests += ["tests/test_golden.py", "-k", " or ".join(goldens)]
    return tests


def run_tests(tree: Path, targets: list[str], timeout: float, log: Path) -> dict:
    if not targets:
        return {"ran": False}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               "-p", "no:randomly", *targets]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=tree, env=_environment(tree), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        rc, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as error:
        rc, output = None, (error.stdout or b"").decode(errors="replace") + "\n(timeout)"
    log.write_text(output)
    tail = [line for line in output.splitlines() if line.strip()][-1:]
    # rc 1: a test failed; 5: nothing collected (the -k matched nothing); None: timeout
    return {"ran": True, "rc": rc, "failed": rc == 1, "timeout": rc is None,
            "seconds": round(time.monotonic() - started, 1), "tail": tail}


def judge(mutant, args, base: Path, work: Path, plan: dict, survived: dict | None = None) -> dict:
    """Run one mutant; `survived`: a campaign record of a longer run that killed it only
    after this run's budget (it survived this one: only the tests run)."""
    source = (base / mutant.path).read_text()
    record = {"key": mutant.key, "module": mutant.path, "line": mutant.line,
              "kind": mutant.kind, "mutation": mutant.description, "text": str(mutant)}
    tree = work / f"m-{mutant.key.replace('/', '_').replace('#', '-')}"
    mutant_tree(base, tree, mutant.path, mutant.apply(source))
    logs = work / "logs"
    stem = tree.name
    if survived is not None:
        campaign = dict(survived, findings=[], killed_later=survived.get("programs"))
        campaign["programs"] = args.programs
    else:
        campaign = run_campaign(tree, plan["passes"], args, logs / f"{stem}.campaign.txt")
    record["campaign"] = campaign
    findings = campaign.get("findings") or []
    if survived is not None:
        record["verdict"] = "survived-campaign"
    elif "error" in campaign and campaign.get("rc") is not None:
        record["verdict"] = "trivial"  # the run could not even start: an import error
    elif campaign.get("rc") is None:
        record["verdict"] = "campaign-timeout"
    elif findings or campaign.get("internal_error"):
        first = findings[0] if findings else {}
        false = replays_on_clean(base, first.get("record")) if findings else None
        record["clean_tree_fails_too"] = false
        if false:
            record["verdict"] = "survived-campaign"
        elif campaign.get("programs", 0) <= 1 and (first.get("oracle") in TRIVIAL_ORACLES
                                                    or campaign.get("internal_error")):
            record["verdict"] = "trivial"
        else:
            record["verdict"] = "killed-campaign"
    else:
        record["verdict"] = "survived-campaign"
    if record["verdict"] == "survived-campaign" and not args.no_tests:
        tests = run_tests(tree, test_targets(tree, mutant.path, plan["test_passes"]),
                          args.test_timeout, logs / f"{stem}.tests.txt")
        record["tests"] = tests
        if tests.get("failed") or tests.get("timeout"):
            record["verdict"] = "killed-tests"
    shutil.rmtree(tree, ignore_errors=True)
    return record


# -- the child: the default campaign in a mutant's tree ----------------------------------------

def child(args) -> int:
    import agxir

    tree = Path.cwd().resolve()
    where = Path(agxir.__file__).resolve()
    if tree not in where.parents:
        print(f"mutation child: agxir imported from {where}, not from {tree}", file=sys.stderr)
        return 3
    passes = json.loads(args.child_passes)
    from fuzz import cli
    from fuzz.commands import run, units

    def restricted(namespace):
        found, pipelines = units.units_under_test(namespace)
        if passes is not None:
            pipelines = [p for p in pipelines if any(u.name in passes for u in p)]
        print(f"mutation: {len(pipelines)} pipelines", flush=True)
        return found, pipelines

    run.units_under_test = restricted
    rc = cli.main(["run", "--examples", str(args.programs), "--seed", str(args.campaign_seed),
                   "--jobs", "1", "--fail-fast", "--no-reduce", "--out", args.child_out,
                   "--json-report", args.child_report])
    report = json.loads(Path(args.child_report).read_text())
    for finding in report.get("findings", []):
        finding["record"] = _record_of(finding)
    slim = {key: report.get(key) for key in ("programs", "internal_error", "findings")}
    slim.update(exit_status=rc, agxir=str(where))
    Path(args.child_report).write_text(json.dumps(slim))
    return 0


def _record_of(finding: dict) -> str | None:
    """The finding's JSON record beside its reproducer."""
    reproducer = finding.get("file")
    if not reproducer:
        return None
    for candidate in (Path(reproducer).with_suffix(".json"),):
        if candidate.exists():
            return str(candidate.resolve())
    return None


# -- the run -------------------------------------------------------------------------------------

def summarize(records: list[dict], modules: list[str], plans: dict) -> list[dict]:
    rows = []
    for module in modules:
        mine = [r for r in records if r["module"] == module]
        count = {v: sum(r["verdict"] == v for r in mine) for v in
                 ("trivial", "killed-campaign", "killed-tests", "survived-campaign",
                  "campaign-timeout")}
        half = sum(r["verdict"] == "killed-campaign"
                   and (r["campaign"].get("programs") or 0) <= HALF for r in mine)
        rows.append({"module": module, "mutants": len(mine), **count, "killed_by_half": half,
                     "pipelines": plans[module]["pipelines"],
                     "survivors": [r["text"] for r in mine
                                   if r["verdict"] == "survived-campaign"],
                     "killed_by_tests": [r["text"] for r in mine
                                         if r["verdict"] == "killed-tests"]})
    return rows


def print_table(rows: list[dict], settings: dict) -> None:
    print(f"mutation score at {settings['commit']}: campaign `run --examples "
          f"{settings['programs']} --seed {settings['campaign_seed']} --jobs 1 --fail-fast "
          "--no-reduce`, restricted to the pipelines that can run the mutated code (the others "
          "run unmutated code); 'by 480' = killed within the first 480 programs (30 s)")
    print(f"{'module':<36} {'pipes':>5} {'mut':>4} {'triv':>4} {'camp':>4} {'+tst':>4} "
          f"{'surv':>4}  campaign alone / with tests (of non-trivial); by 480")
    totals = [0, 0, 0, 0, 0, 0]
    for row in rows:
        live = row["mutants"] - row["trivial"]
        campaign, tests = row["killed-campaign"], row["killed-tests"]
        survivors = row["survived-campaign"] + row["campaign-timeout"]
        share = (f"{100 * campaign / live:5.1f}% / {100 * (campaign + tests) / live:5.1f}%; "
                 f"{100 * row['killed_by_half'] / live:5.1f}%" if live else "    - /     -")
        pipes = "all" if row["pipelines"] is None else str(row["pipelines"])
        print(f"{row['module']:<36} {pipes:>5} {row['mutants']:>4} {row['trivial']:>4} "
              f"{campaign:>4} {campaign + tests:>4} {survivors:>4}  {share}")
        for i, value in enumerate((row["mutants"], row["trivial"], campaign, tests, survivors,
                                   row["killed_by_half"])):
            totals[i] += value
    live = totals[0] - totals[1]
    if live:
        print(f"{'all':<36} {'':>5} {totals[0]:>4} {totals[1]:>4} {totals[2]:>4} "
              f"{totals[2] + totals[3]:>4} {totals[4]:>4}  {100 * totals[2] / live:5.1f}% / "
              f"{100 * (totals[2] + totals[3]) / live:5.1f}%; {100 * totals[5] / live:5.1f}%")
    print("survivors of the campaign (* = the module's tests or goldens kill it):")
    for row in rows:
        for text in row["killed_by_tests"]:
            print(f"  * {text}")
        for text in row["survivors"]:
            print(f"    {text}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", help="comma-separated paths (default: every pass module)")
    parser.add_argument("--mutants-per-module", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1, help="seed of the mutant sample")
    parser.add_argument("--programs", type=int, default=960,
                        help="campaign budget in programs (default 960: 60 s of the default "
                             "campaign at the 16 programs/s recorded on 2 quiet cores)")
    parser.add_argument("--campaign-seed", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=2, help="mutants at once")
    parser.add_argument("--no-tests", action="store_true")
    parser.add_argument("--test-timeout", type=float, default=600.0)
    parser.add_argument("--campaign-timeout", type=float, default=3600.0)
    parser.add_argument("--json", help="write every mutant's record here (after each mutant)")
    parser.add_argument("--resume-from", metavar="JSON",
                        help="take the mutants a run of this commit with at least --programs "
                             "recorded (a kill after --programs programs is a survivor here)")
    parser.add_argument("--resume", action="store_true",
                        help="skip mutants --json already holds for this commit and settings")
    parser.add_argument("--work", default="/tmp/mutbench/run")
    parser.add_argument("--summarize", metavar="JSON,...",
                        help="print the table of earlier runs' --json files and exit")
    parser.add_argument("--judgements", metavar="JSON",
                        help="with --summarize: {mutant: [equivalent|correct|gap, why]}")
    parser.add_argument("--commit", default="HEAD", help="the commit to measure (default HEAD)")
    parser.add_argument("--working-tree", action="store_true",
                        help="copy the working tree with its uncommitted changes (default: HEAD)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-plan", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-passes", help=argparse.SUPPRESS)
    parser.add_argument("--child-report", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.child_plan:
        return child_plan()
    if args.summarize:
        return print_saved(args.summarize.split(","), args.judgements)

    work = Path(args.work)
    base = work / "base"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", args.commit], text=True,
                            capture_output=True).stdout.strip() or "unknown"
    if args.working_tree:
        commit += " + the working tree's uncommitted changes"
    copy_base(ROOT, base, None if args.working_tree else commit)
    (work / "logs").mkdir(parents=True, exist_ok=True)
    modules = args.modules.split(",") if args.modules else default_modules(base)
    graph = import_graph(base)
    default = default_plan(base)
    passes, everything = default["passes"], default["pipelines"]
    plans, chosen = {}, []
    for module in modules:
        affected = affected_passes(module, graph, passes)
        own = sorted(p for p, m in passes.items() if m == module_name(module))
        pipelines = (None if affected is None else
                     sum(any(name in affected for name in p) for p in everything))
        plans[module] = {"passes": affected, "pipelines": pipelines,
                         "test_passes": own or (affected or [])}
        mutants = enumerate_mutants((base / module).read_text(), module)
        plans[module]["enumerated"] = len(mutants)
        # In the shuffle's order: a run stopped after j rounds has run the sample of size j.
        chosen.append(sample(mutants, args.mutants_per_module, args.seed, source_order=False))
        print(f"{module}: {len(mutants)} mutants, {len(chosen[-1])} sampled; pipelines: "
              + ("all (the checking code imports it)" if affected is None else
                 f"{pipelines} of {len(everything)} (passes {', '.join(affected) or 'none'})"),
              flush=True)
    # Round robin over modules, so a run stopped early has seen every module.
    order = [m for i in range(max(map(len, chosen), default=0)) for ms in chosen
             for m in ms[i:i + 1]]
    settings = {"commit": commit, "programs": args.programs, "campaign_seed": args.campaign_seed,
                "tests": not args.no_tests}
    records: list[dict] = []
    if args.resume and args.json and Path(args.json).exists():
        old = json.loads(Path(args.json).read_text())
        if old.get("settings") == settings:
            wanted = {m.key: str(m) for m in order}
            records = [r for r in old["mutants"] if wanted.get(r["key"]) == r["text"]]
    later: dict[str, dict] = {}  # killed by a longer run after this run's budget
    if args.resume_from:
        old = json.loads(Path(args.resume_from).read_text())
        same = {k: v for k, v in old["settings"].items() if k != "programs"}
        if same == {k: v for k, v in settings.items() if k != "programs"} and \
                old["settings"]["programs"] >= args.programs:
            wanted = {m.key: str(m) for m in order}
            for r in old["mutants"]:
                if wanted.get(r["key"]) != r["text"] or r["verdict"] == "campaign-timeout":
                    continue
                if r["verdict"] == "killed-campaign" and r["campaign"]["programs"] > args.programs:
                    later[r["key"]] = r["campaign"]
                    continue
                records.append(dict(r, from_run_of=old["settings"]["programs"]))
        else:
            print(f"--resume-from {args.resume_from}: other settings, not used", flush=True)
    done = {r["key"] for r in records}
    order = [m for m in order if m.key not in done]
    lock = Lock()

    def save() -> None:
        if args.json:
            data = {"settings": settings, "plans": plans, "mutants": records,
                    "modules": summarize(records, modules, plans)}
            Path(args.json).write_text(json.dumps(data, indent=1))

    def one(mutant) -> None:
        try:
            record = judge(mutant, args, base, work, plans[mutant.path], later.get(mutant.key))
        except Exception as error:  # a bench bug: say so, do not count the mutant
            print(f"{mutant}: bench error {type(error).__name__}: {error}", flush=True)
            return
        with lock:
            records.append(record)
            save()
            campaign = record["campaign"]
            print(f"[{len(records)}/{len(records) + len(order) - len(records)}] {mutant}: "
                  f"{record['verdict']} ({campaign.get('programs')} programs, "
                  f"{campaign['seconds']} s)", flush=True)

    print(f"{len(order)} mutants to run ({len(done)} from --resume), {args.parallel} at once",
          flush=True)
    with ThreadPoolExecutor(args.parallel) as pool:
        list(pool.map(one, order))
    records.sort(key=lambda r: (modules.index(r["module"]), r["line"], r["key"]))
    save()
    print_table(summarize(records, modules, plans), settings)
    return 0


def print_saved(paths: list[str], judgements: str | None) -> int:
    """The table again from --json files (one per run: each prints with its own settings);
    with `judgements`, the campaign's share of the survivors' non-equivalent mutants."""
    judged = json.loads(Path(judgements).read_text()) if judgements else {}
    for path in paths:
        data = json.loads(Path(path).read_text())
        modules = list(data["plans"])
        records = sorted(data["mutants"], key=lambda r: (modules.index(r["module"]), r["line"]))
        rows = summarize(records, modules, data["plans"])
        print_table(rows, data["settings"])
        if judged:
            print_judged(rows, records, judged)
        print()
    return 0


def print_judged(rows: list[dict], records: list[dict], judged: dict) -> None:
    """Per module: the campaign alone against the non-equivalent mutants (a judgement per
    survivor: `equivalent`, `correct` (still a correct pass: a missed or extra optimisation,
    counted as non-equivalent) or `gap` (a bug the campaign misses))."""
    print("judged survivors (equivalent: cannot change behaviour; correct: the pass stays "
          "correct, a missed or extra optimisation; gap: a bug the campaign misses):")
    print(f"{'module':<36} {'live':>4} {'equiv':>5} {'corr':>4} {'gap':>4} {'?':>3}  campaign "
          "alone of non-equivalent (>= 80%: issue 19's target)")
    totals = [0, 0, 0]
    for row in rows:
        mine = [r for r in records if r["module"] == row["module"]
                and r["verdict"] in ("survived-campaign", "killed-tests", "campaign-timeout")]
        kinds = [judged.get(r["text"], ["?"])[0] for r in mine]
        live = row["mutants"] - row["trivial"]
        equivalent = kinds.count("equivalent")
        counted = live - equivalent
        share = 100 * row["killed-campaign"] / counted if counted else None
        flag = "" if share is None or share >= 80 else "  <- below"
        print(f"{row['module']:<36} {live:>4} {equivalent:>5} {kinds.count('correct'):>4} "
              f"{kinds.count('gap'):>4} {kinds.count('?'):>3}  "
              + (f"{share:5.1f}%{flag}" if share is not None else "    -"))
        totals = [totals[0] + row["killed-campaign"], totals[1] + counted,
                  totals[2] + kinds.count("correct")]
    if totals[1]:
        print(f"{'all':<36} campaign alone kills {totals[0]} of {totals[1]} non-equivalent "
              f"({100 * totals[0] / totals[1]:.1f}%); {totals[0]} of {totals[1] - totals[2]} "
              f"leaving out the still-correct ones "
              f"({100 * totals[0] / max(1, totals[1] - totals[2]):.1f}%)")


if __name__ == "__main__":
    sys.exit(main())
