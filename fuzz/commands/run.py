"""`agxfuzz run`: a campaign over generated programs, its summary and its reports."""

from __future__ import annotations

import random
import sys
import textwrap

from agxir.machine.paths import PATHS
from agxir.passes import RULE_TABLES
from fuzz import VERSION
from fuzz.campaign import CampaignConfig, default_jobs, run_campaign
from fuzz.campaign_db.db import DEFAULT_DB_NAME, DBError, open_db
from fuzz.ci_reports import json_report, write_json_report, write_junit, write_sarif
from fuzz.commands.errors import UsageError
from fuzz.commands.isolation import pass_memory
from fuzz.commands.loaders import writable_output
from fuzz.commands.report import require_dot, write_report
from fuzz.commands.units import replay_flags, units_under_test
from fuzz.findings import FindingStore
from fuzz.rule_baseline import BaselineError, expect_rules, load_baseline, rule_rates, write_rates


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
        print(f"interrupted ({result.stopped_by}): the counts cover the programs checked "
              "before it")
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
    if stats.unallocatable:
        print(f"machine pipeline: {stats.unallocatable} programs not allocatable (over the "
              "register bound), not allocated")
    if stats.inconclusive:
        print(f"refinement inconclusive: {stats.inconclusive} steps whose output ran out of "
              "the budget the input's own step count gives it (not findings)")
    if stats.not_translatable:
        by_opcode = ", ".join(f"{name} {count}"
                              for name, count in stats.not_translatable_opcodes.most_common())
        print(f"not translatable to Mesa: {stats.not_translatable} programs (by opcode: "
              f"{by_opcode})")
    print("pass changes (programs where the pass changed something / runs):")
    for unit in units:
        runs = stats.pass_runs.get(unit.name, 0)
        changed = stats.pass_changes.get(unit.name, 0)
        share = f"{100 * changed / runs:5.1f}%" if runs else "    -"
        print(f"  {unit.name:<24} {changed:>7} / {runs:<7} {share}")
    still = [unit.name for unit in units if not stats.pass_changes.get(unit.name)]
    if still and stats.programs:  # a pass that silently stopped optimizing is a regression too
        print(f"  never changed a program: {', '.join(still)}")
    _print_rule_hits(stats, units)
    _print_pressure_paths(stats)
    _print_guidance(result)
    if result.restored:
        print(f"written at start: {len(result.restored)} findings the database recorded but a "
              "killed run never wrote")
        for files in result.restored:
            print(f"  reproducer: {files.reproducer}")
    print(f"findings: {len(result.findings)} ({result.duplicates} duplicates dropped)")
    for number, (finding, files) in enumerate(result.findings):
        more = result.more_like[number] if number < len(result.more_like) else 0
        like = f" ({more} more like it)" if more else ""
        print(f"  {finding.pass_name}: {finding.oracle}: {finding.message}{like}")
        if files and files.reproducer:  # a missed rule has a replay, no reproducer
            print(f"    reproducer: {files.reproducer}")
        if files:
            print(f"    replay: {files.command}")
    if result.elsewhere:
        print(f"found here, claimed and written by another run sharing the database: "
              f"{len(result.elsewhere)}")
        for finding, claimant in result.elsewhere:
            print(f"  {finding.pass_name}: {finding.oracle}: {finding.message} (by {claimant})")


def _print_rule_hits(stats, units) -> None:
    """Per registered rule-table pass under test: how often each rule fired per 1,000
    programs, and the rules that never fired (a rule that silently stopped matching)."""
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


def _print_pressure_paths(stats) -> None:
    """How many of the programs that reached the machine level took each path the machine
    passes count (agxir.machine.paths): what the passes do under register pressure."""
    total = stats.machine_programs
    if not total:
        return
    reached = ", ".join(f"{label} {stats.pressure_paths.get(path, 0)} "
                        f"({100 * stats.pressure_paths.get(path, 0) / total:.1f}%)"
                        for path, label in PATHS.items())
    # Mesa's allocator (run --mesa) is C and counts nothing here: say whose paths these are.
    text = (f"pressure paths the model's machine passes took (of {total} machine-level "
            f"programs): {reached}")
    print("\n  ".join(textwrap.wrap(text, 92, break_on_hyphens=False)))


def _print_guidance(result) -> None:
    """Features reached, the corpus, fresh programs against mutants, the coverage cost."""
    corpus, stats = result.corpus, result.stats
    if corpus is None:
        return
    kinds = ", ".join(f"{kind} {count}" for kind, count in corpus.by_kind().items())
    stored = f"; {corpus.new_features} not in the stored corpus" if corpus.on else ""
    print(f"features reached: {len(corpus.features)} ({kinds}){stored}")
    if corpus.on:
        start = (f"started from the database's {len(corpus.loaded)}" if corpus.shared else
                 f"the database holds {len(corpus.stored)}, not read: --guidance shared reads them")
        print(f"corpus: {corpus.added} entries new from this run, {corpus.kept} of them new to "
              f"the database ({start})")
        print(f"programs: {stats.fresh_programs} fresh, {stats.mutant_programs} mutants of "
              "corpus entries")
    else:
        print("guidance off: every program fresh from the seed, the corpus neither read nor written")
    for version, count in sorted(corpus.other_versions.items()):
        print(f"corpus of generator version {version}: {count} entries, left alone (this "
              "generator reads its choices differently)")
    sampled, plain = stats.coverage_programs, stats.programs - stats.coverage_programs
    if sampled and plain and stats.plain_seconds:
        under = stats.coverage_seconds / sampled
        without = stats.plain_seconds / plain
        extra = (stats.coverage_seconds - sampled * without) / (stats.plain_seconds
                                                                  + sampled * without)
        print(f"coverage: {sampled} programs under coverage.py ({sampled / stats.programs:.1%} "
              f"of them), {1e3 * under:.1f} ms each against {1e3 * without:.1f} ms plain: "
              f"{extra:+.1%} checking time")


def _shard(text: str | None) -> tuple[int, int]:
    """`--shard K/N` as (K, N), 1 <= K <= N."""
    if text is None:
        return (1, 1)
    k, slash, n = text.partition("/")
    if not (slash and k.strip().isdigit() and n.strip().isdigit()
            and 1 <= int(k) <= int(n)):
        raise UsageError(f"agxfuzz: --shard {text}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(k), int(n)


def _open_db(spec: str | None, store):
    """The campaign database `--db` names (default: OUT/.agxfuzz-db), its claims held in
    the name of the findings directory."""
    try:
        owner = store.identity()
        return open_db(spec or str(store.directory / DEFAULT_DB_NAME), owner=owner)
    except DBError as error:
        raise UsageError(f"agxfuzz: {error}") from None
    except OSError as error:
        raise UsageError(f"agxfuzz: {store.directory}: {error.strerror}") from None


def _rule_baseline(args):
    """The baseline `--expect-rules` names, or None; a bad file is bad usage."""
    if not getattr(args, "expect_rules", None):
        return None

    try:
        return load_baseline(args.expect_rules)
    except BaselineError as error:
        raise UsageError(f"agxfuzz: --expect-rules {error}") from None


def run_campaign_command(args) -> int:
    units, pipelines = units_under_test(args)
    mesa = getattr(args, "mesa", None)
    if mesa is not None:  # run --mesa: Mesa's passes through the bridge (fuzz/mesa/)
        # The Mesa bridge is loaded late: only a --mesa run needs it.
        from fuzz.mesa.build import MesaBuildError
        from fuzz.mesa.campaign import mesa_units
        from fuzz.mesa.variants import PatchDoesNotApply

        try:
            units, pipelines = mesa_units(mesa, with_fixes=getattr(args, "with_fixes", False))
        except (MesaBuildError, PatchDoesNotApply) as error:
            raise UsageError(str(error)) from None
        if getattr(args, "with_fixes", False):  # its findings replay only on the same bridge: say how
            from fuzz.mesa.fixes import ENV, names  # loaded late: the Mesa bridge's

            print(f"Mesa bridge with the fixes of fuzz/mesa/fixes ({', '.join(names())}); "
                  f"its findings replay with {ENV}=1")
    elif getattr(args, "with_fixes", False):
        raise UsageError("agxfuzz: --with-fixes: only with --mesa (the fixes are to Mesa's C)")
    baseline = _rule_baseline(args)  # a bad --expect-rules file is refused before the run
    memory = pass_memory(args)
    coverage_every = getattr(args, "coverage_every", 20)
    if coverage_every < 0:
        raise UsageError(f"agxfuzz: --coverage-every {coverage_every}: expected 0 or more")
    guidance = getattr(args, "guidance", "on")
    if mesa is not None:  # corpus mutants are not drawn from the translatable profile
        guidance = "off"
    if getattr(args, "html", None):  # refuse now, not after the campaign, when dot is missing

        require_dot("agxfuzz run --html")
    for flag in ("json_report", "junit", "sarif", "html"):  # refuse now, not after the run
        writable_output(getattr(args, flag, None), "--" + flag.replace("_", "-"))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    if args.examples is None and args.time is None:
        args.time = 60.0
    jobs = args.jobs or default_jobs()
    shard = _shard(getattr(args, "shard", None))
    store = FindingStore(args.out, replay_flags(units))
    db = _open_db(getattr(args, "db", None), store)
    print(f"agxfuzz run: seed {seed}, {jobs} jobs, "
          + (f"{args.examples} programs" if args.examples else f"{args.time:g} s")
          + f", {len(units)} passes under test, {len(pipelines)} pipelines"
          + (f", shard {shard[0]}/{shard[1]}" if shard != (1, 1) else "")
          + f", db {db.location}, guidance {guidance}"
          + (f", coverage 1 in {coverage_every}" if coverage_every else ""), flush=True)
    config = CampaignConfig(
        seed=seed, pipelines=pipelines, examples=args.examples, seconds=args.time, jobs=jobs,
        fail_fast=args.fail_fast, tv=args.tv, pass_memory_mb=memory, shard=shard, db=db,
        guidance=guidance != "off", shared_corpus=guidance == "shared",
        coverage_every=coverage_every, mesa_translatable=mesa is not None,
        **({"reduce_seconds": 0} if args.no_reduce else {}),  # else the config's budget
    )
    tty = sys.stdout.isatty()

    def progress(stats, elapsed, findings):
        rate = stats.programs / elapsed if elapsed else 0
        line = f"[{elapsed:5.0f} s] {stats.programs} programs ({rate:.0f}/s), {findings} findings"
        print(("\r" + line) if tty else line, end="" if tty else "\n", flush=True)

    try:
        result = run_campaign(config, store, progress)
    finally:
        db.close()
    if tty:
        print()
    names = [unit.name for unit in units]
    if baseline is not None:  # missed rules join the findings before the summary and reports

        rules_note = expect_rules(baseline, args, result, names, seed, jobs)
    _print_summary(result, units, seed)
    if baseline is not None:
        print(rules_note)
    if getattr(args, "save_rules", None):
        write_rates(args.save_rules, rule_rates(result.stats, names, seed))
    if args.json_report:
        write_json_report(args.json_report, json_report(result, seed, names))
    if args.junit:
        write_junit(args.junit, result, names)
    if args.sarif:
        write_sarif(args.sarif, result.findings, VERSION)
    if getattr(args, "html", None):
        write_report(args.html, args.out, title=f"agxfuzz run, seed {seed}",
                     records=[files.record for _, files in result.findings
                              if files and files.record is not None])
    if result.internal_error:
        print(f"agxfuzz: internal error (a harness bug, please report): {result.internal_error}",
              file=sys.stderr)
        return 3
    if result.findings or result.elsewhere:  # a bug another machine wrote is still a bug
        return 1
    if result.outside_deaths:  # not a pass's finding, but the run cannot vouch for itself
        print(f"agxfuzz: {len(result.outside_deaths)} worker(s) killed from outside the run "
              "(a user, the OOM killer?): not a green run", file=sys.stderr)
        return 3
    if result.interrupted:  # not every program of the budget was checked: not a green run
        return 130
    return 0


