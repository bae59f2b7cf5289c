"""`agxfuzz run`, `agxfuzz check` and `agxfuzz opt`: putting passes under test."""

from __future__ import annotations

import random
import sys

from fuzz.cli import UsageError, UserError


def units_under_test(args) -> tuple[list, list[list]]:
    """The passes under test and the pipelines to run: each pass alone, plus the default and
    the address pipelines (no --passes and no user pass) or the passes in the order given."""
    from agxir.passes import ADDRESS_PIPELINE, DEFAULT_PIPELINE, PASSES, UnknownPass
    from fuzz.passes_under_test import PassLoadError, command_pass, python_pass, registered

    user = []
    try:
        user += [python_pass(spec) for spec in args.python_passes or []]
        user += [command_pass(command) for command in args.pass_commands or []]
        if args.passes is not None:
            names = [n.strip() for n in args.passes.split(",") if n.strip()]
        else:
            names = [] if user else list(PASSES)
        # `--passes` may name Python passes (MODULE:CALLABLE) among registered ones, so a
        # replay keeps a wrong pass in its place between the machine steps around it.
        units = [python_pass(n) if ":" in n else registered(n) for n in names] + user
    except (UnknownPass, PassLoadError) as error:
        raise UsageError(f"agxfuzz: {error}") from None
    from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINES
    from fuzz.passes_under_test import machine_prefix

    by_name = {unit.name: unit for unit in units}
    pipelines = [
        [by_name.get(n) or registered(n) for n in machine_prefix(unit.name)]
        for unit in units
        if unit.name not in MACHINE_PASSES or args.passes is not None
    ]
    if args.passes is None and not user:
        pipelines.append([registered(name) for name in DEFAULT_PIPELINE])
        pipelines.append([registered(name) for name in ADDRESS_PIPELINE])
        # The machine level: Mesa's route (SSA-based RA), the vreg route, and each
        # register-level pass after the steps that bring a program to it.
        units += [registered(name) for name in MACHINE_PASSES]
        machine = {unit.name: unit for unit in units}
        pipelines += [[machine[name] for name in pipeline] for pipeline in MACHINE_PIPELINES]
    elif len(units) > 1:
        pipelines.append(list(units))
    return units, pipelines


def _replay_flags(units):
    from fuzz.passes_under_test import replay_arguments

    by_name = {unit.name: unit for unit in units}
    return lambda finding: replay_arguments([by_name[name] for name in finding.pipeline])


def _print_summary(result, units, seed: int) -> None:
    stats = result.stats
    print(f"seed: {seed}")
    print(
        f"programs checked: {stats.programs} in {result.seconds:.1f} s "
        f"({result.programs_per_second:.1f} programs/s)"
    )
    print(
        f"input sets: {stats.input_sets}, skipped {stats.skipped_undefined} undefined, "
        f"{stats.skipped_out_of_fuel} out of fuel"
    )
    if result.interrupted:
        print("interrupted (Ctrl-C): the counts cover the programs checked before it")
    if result.worker_deaths:
        print(f"workers taken down by a pass: {result.worker_deaths} (each reported, each replaced)")
    if result.hung_workers:
        print(f"workers killed because a pass ran past its deadline: {result.hung_workers}")
    for death in result.outside_deaths:
        print(f"killed from outside the run: {death} (checked again by its replacement)")
    if result.memory_limit_hits:
        print(f"pass memory limit hit: {result.memory_limit_hits} times (--pass-memory)")
    if stats.unstructurable:
        print(f"machine pipeline: {stats.unstructurable} programs not structurable, not lowered")
    print("pass changes (programs where the pass changed something / runs):")
    for unit in units:
        runs = stats.pass_runs.get(unit.name, 0)
        changed = stats.pass_changes.get(unit.name, 0)
        share = f"{100 * changed / runs:5.1f}%" if runs else "    -"
        print(f"  {unit.name:<24} {changed:>7} / {runs:<7} {share}")
    _print_rule_hits(stats, units)
    print(f"findings: {len(result.findings)} ({result.duplicates} duplicates dropped)")
    for number, (finding, files) in enumerate(result.findings):
        more = result.more_like[number] if number < len(result.more_like) else 0
        like = f" ({more} more like it)" if more else ""
        print(f"  {finding.pass_name}: {finding.oracle}: {finding.message}{like}")
        if files:
            print(f"    reproducer: {files.reproducer}")
            print(f"    replay: {files.command}")


def _print_rule_hits(stats, units) -> None:
    """Per registered rule-table pass under test: how often each rule fired per 1,000
    programs, and the rules that never fired (a rule that silently stopped matching)."""
    import textwrap

    from agxir.passes import RULE_TABLES

    tables = [(u.name, RULE_TABLES[u.name]) for u in units if u.name in RULE_TABLES]
    if not tables or not stats.programs:
        return
    print("rule hits per 1,000 programs (rules that never fired after 'never:'):")
    for name, rules in tables:
        hits = {rule.name: stats.rule_hits.get((name, rule.name), 0) for rule in rules}
        fired = sorted((n for n in hits if hits[n]), key=lambda n: -hits[n])
        never = [n for n in hits if not hits[n]]
        sections = [", ".join(f"{n} {1000 * hits[n] / stats.programs:.1f}" for n in fired)]
        if never:
            sections.append("never: " + ", ".join(never))
        text = "; ".join(section for section in sections if section)
        lines = textwrap.wrap(text, 68, break_on_hyphens=False, break_long_words=False) or [""]
        print(f"  {name:<24}   {lines[0]}")
        for line in lines[1:]:
            print(f"  {'':<24}   {line}")


def run_campaign_command(args) -> int:
    from fuzz.campaign import CampaignConfig, default_jobs, run_campaign
    from fuzz.cli import VERSION
    from fuzz.findings import FindingStore
    from fuzz.reports import json_report, write_json_report, write_junit, write_sarif

    units, pipelines = units_under_test(args)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    if args.examples is None and args.time is None:
        args.time = 60.0
    jobs = args.jobs or default_jobs()
    print(f"agxfuzz run: seed {seed}, {jobs} jobs, "
          + (f"{args.examples} programs" if args.examples else f"{args.time:g} s")
          + f", {len(units)} passes under test, {len(pipelines)} pipelines", flush=True)
    config = CampaignConfig(
        seed=seed, pipelines=pipelines, examples=args.examples, seconds=args.time, jobs=jobs,
        fail_fast=args.fail_fast, tv=args.tv, reduce_seconds=0 if args.no_reduce else 10.0,
        pass_memory_mb=getattr(args, "pass_memory", 4096) or None,
    )
    store = FindingStore(args.out, _replay_flags(units))
    tty = sys.stdout.isatty()

    def progress(stats, elapsed, findings):
        rate = stats.programs / elapsed if elapsed else 0
        line = f"[{elapsed:5.0f} s] {stats.programs} programs ({rate:.0f}/s), {findings} findings"
        print(("\r" + line) if tty else line, end="" if tty else "\n", flush=True)

    result = run_campaign(config, store, progress)
    if tty:
        print()
    _print_summary(result, units, seed)
    names = [unit.name for unit in units]
    if args.json_report:
        write_json_report(args.json_report, json_report(result, seed, names))
    if args.junit:
        write_junit(args.junit, result, names)
    if args.sarif:
        write_sarif(args.sarif, result.findings, VERSION)
    if result.internal_error:
        print(f"agxfuzz: internal error (a harness bug, please report): {result.internal_error}",
              file=sys.stderr)
        return 3
    if result.findings:
        return 1
    if result.outside_deaths:  # not a pass's finding, but the run cannot vouch for itself
        print(f"agxfuzz: {len(result.outside_deaths)} worker(s) killed from outside the run "
              "(a user, the OOM killer?): not a green run", file=sys.stderr)
        return 3
    if result.interrupted:  # not every program of the budget was checked: not a green run
        return 130
    return 0


def check_command(args) -> int:
    from fuzz.cli import load_function
    from fuzz.findings import FindingStore
    from fuzz.harness import Harness
    from fuzz.interp_command import seeded_input_sets

    fn = load_function(args.file)
    units, pipelines = units_under_test(args)
    sets = seeded_input_sets(fn, args)
    harness = Harness(sets, tv_threads=max(s.threads for s in sets) if args.tv else 0)
    # Passes named: in the order given. None named: the campaign's pipelines (machine
    # passes after the steps that bring a program to their level, never after each other).
    given = args.passes is not None or args.python_passes or args.pass_commands
    findings = check_isolated(harness, fn, [units] if given else pipelines)
    names = " -> ".join(unit.name for unit in units) or "(no passes)"
    if not given:
        names = f"{len(units)} passes in {len(pipelines)} pipelines"
    if not findings:
        print(f"{args.file}: {names}: every oracle agrees on {len(sets)} input sets")
        return 0
    for finding in findings:
        print(f"{args.file}: {finding.pass_name}: {finding.oracle}: {finding.message}")
    if args.out:
        store = FindingStore(args.out, _replay_flags(units))
        for finding in findings:
            print(f"  written: {store.write(finding).reproducer}")
    return 1


HANG_GRACE = 20.0  # seconds a pass may overrun its deadline before its process is killed
PASS_MEMORY_MB = 4096  # address space of the process that runs passes for check and repro


def check_isolated(harness, fn, pipelines) -> list:
    """`harness.check` in a forked child: a pass that exits, kills its process or defeats
    its deadline is a finding (found by re-running each pipeline prefix in a fresh child),
    never a green check nor a `check` that exits with the pass's status."""
    import multiprocessing
    import time

    from agxir.text import print_function
    from fuzz.cli import InternalError
    from fuzz.harness import Finding
    from fuzz.processes import describe_death, dies, run_in_child, stamped, unstamp

    def bound(steps: int) -> float:
        return (harness.pass_timeout + HANG_GRACE) * steps + 600

    where = multiprocessing.Array("q", 1, lock=False)
    since = multiprocessing.Array("d", 1, lock=False)

    def stuck() -> bool:
        return bool(since[0]) and time.monotonic() - since[0] > harness.pass_timeout + HANG_GRACE

    steps = sum(len(pipeline) for pipeline in pipelines)
    kind, value = run_in_child(harness.check, fn, stamped(pipelines, 0, where, since),
                               seconds=bound(steps), stuck=stuck, memory_mb=PASS_MEMORY_MB)
    if kind == "ok":
        return value
    if kind == "raised":
        raise InternalError(f"agxfuzz: internal error (a harness bug, please report): {value}")
    text = print_function(fn)
    if kind == "hung" and since[0]:
        number, step = unstamp(where[0])
        names = tuple(unit.name for unit in pipelines[number][: step + 1])
        message = (f"the pass ran longer than {harness.pass_timeout:g} s and did not stop at "
                   f"its deadline: killed after {harness.pass_timeout + HANG_GRACE:g} s")
        return [Finding(names[-1], "timeout", message, names, text, harness.input_sets[0])]
    for pipeline in pipelines:
        for length in range(1, len(pipeline) + 1):
            prefix = list(pipeline[:length])
            status = dies(lambda p=prefix: harness.check(fn, [p]), seconds=bound(length),
                          memory_mb=PASS_MEMORY_MB)
            if status is not None:
                names = tuple(step.name for step in prefix)
                oracle = "timeout" if status == "hung" else "crash"
                message = f"the pass took its process down ({describe_death(status)})"
                return [Finding(names[-1], oracle, message, names, text, harness.input_sets[0])]
    names = tuple(step.name for step in pipelines[0]) if pipelines else ()
    how = describe_death(value if kind == "died" else "hung")
    message = f"the check's process {how}; no pipeline alone does"
    return [Finding(names[-1] if names else "(input)", "crash", message, names, text)]


def opt_command(args) -> int:
    from agxir.passes import UnknownPass
    from agxir.text import print_function
    from agxir.verifier import verify
    from fuzz.cli import load_function

    fn = load_function(args.file, interpreted=False)
    names = [n.strip() for n in args.passes.split(",") if n.strip()]
    try:
        from fuzz.passes_under_test import registered

        steps = [registered(name) for name in names]
        changes = [(step.name, step.run(fn)) for step in steps]
    except UnknownPass as error:
        raise UsageError(f"agxfuzz: {error}") from None
    except Exception as error:  # the pass itself failed
        raise UserError(f"{args.file}: a pass raised {type(error).__name__}: {error}") from None
    for name, changed in changes:
        print(f"; {name}: {'changed' if changed else 'no change'}")
    if getattr(args, "stats", False):
        from agxir.machine.stats import function_stats

        print(f"; stats: {function_stats(fn).line()}")
    sys.stdout.write(print_function(fn))
    errors = verify(fn)
    if errors:
        raise UserError("\n".join(f"after {','.join(names)}: {e}" for e in errors))
    return 0


def repro_command(args) -> int:
    """Replay a finding's JSON record: exit 1 if it still fails the same way, 0 if it no
    longer fails, 4 if it now fails differently."""
    import argparse
    import json
    from pathlib import Path

    from fuzz.cli import _read, load_function
    from fuzz.harness import Harness
    from fuzz.interp_command import input_sets_for

    try:
        record = json.loads(_read(args.finding))
        reproducer, flags = record["file"], record["flags"]
        signature = record["signature"]
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(f"{args.finding}: not a finding record: {error}") from None
    base = Path(args.finding).parent
    reproducer = _beside(reproducer, base)
    replay = argparse.Namespace(passes=None, python_passes=[], pass_commands=[])
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        if flag == "--passes":
            replay.passes = value
        elif flag == "--pass":
            replay.python_passes.append(value)
        elif flag == "--pass-cmd":
            replay.pass_commands.append(value)
    units, _ = units_under_test(replay)
    fn = load_function(reproducer)
    inputs = record.get("inputs")
    replay.inputs = _beside(inputs, base) if inputs else None
    replay.threads, replay.sets, replay.seed = 32, 8, record.get("seed") or 0
    findings = check_isolated(Harness(input_sets_for(fn, replay)), fn, [units])
    same = [f for f in findings if f.signature == signature]
    if same:
        print(f"{args.finding}: still fails: {same[0].pass_name}: {same[0].oracle}: {same[0].message}")
        return 1
    if findings:
        other = findings[0]
        print(f"{args.finding}: fails differently now: {other.pass_name}: {other.oracle}: {other.message}")
        return 4
    print(f"{args.finding}: no longer fails")
    return 0


def _beside(path: str, base) -> str:
    """A path from a record, or the same file name next to the record if it moved."""
    from pathlib import Path

    if Path(path).exists():
        return path
    return str(Path(base) / Path(path).name)
