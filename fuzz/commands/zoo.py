"""`agxfuzz zoo`: a campaign against each wrong variant, and a table of what caught it."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from xml.etree import ElementTree

from fuzz import VERSION
from fuzz.campaign import default_jobs
from fuzz.campaign_db import DEFAULT_COVERAGE_EVERY
from fuzz.ci_reports import write_sarif
from fuzz.commands.errors import UsageError
from fuzz.commands.report import require_dot, write_report
from fuzz.commands.units import units_under_test
from fuzz.findings import write_atomically
from fuzz.zoo.catalogue import UnknownVariant, select
from fuzz.zoo.runner import run_variant, summary


def zoo_variants(args):
    """The variants `--only` names (all of them without it): fuzz.zoo.catalogue's."""
    try:
        return select(args.only)
    except UnknownVariant as error:
        raise UsageError(f"agxfuzz: {error}") from None


def _mesa_variants(args):
    """`--mesa`: (the variants planted in Mesa's C, each built; the patches that do not
    apply to the tree, each reported by name on stderr)."""
    # The Mesa bridge is loaded late: only a --mesa zoo needs it.
    from fuzz.mesa.build import MesaBuildError
    from fuzz.mesa.variants import names
    from fuzz.mesa.zoo import mesa_variants

    if getattr(args, "default_cost", False):
        raise UsageError("agxfuzz: zoo --mesa runs the Mesa pipelines; --default-cost is the "
                         "model's")
    wanted = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    unknown = [name for name in wanted or [] if name not in names()]
    if unknown:
        raise UsageError(f"agxfuzz: unknown Mesa variant {unknown[0]!r}; known: "
                         f"{', '.join(names())}")
    try:
        variants, refused = mesa_variants(wanted, Path(args.mesa) if args.mesa else None,
                                          lambda name, bridge: print(
                                              f"{name}: bridge {'cached' if bridge.cached else 'built'}",
                                              flush=True))
    except MesaBuildError as error:
        raise UsageError(str(error)) from None
    for one in refused:
        print(one.message, file=sys.stderr)
    return variants, [one.name for one in refused]


def default_pipelines() -> list:
    """The pipelines a default `agxfuzz run` checks every program with."""
    default = argparse.Namespace(passes=None, python_passes=None, pass_commands=None)
    return units_under_test(default)[1]


def run_zoo(args) -> int:
    mesa = getattr(args, "mesa", None) is not None  # the variants planted in Mesa's C
    variants, refused = _mesa_variants(args) if mesa else (zoo_variants(args), [])
    if getattr(args, "html", None):  # refuse now, not after the zoo, when dot is missing

        require_dot("agxfuzz zoo --html")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    jobs = args.jobs or default_jobs()
    out = Path(args.out)
    programs = getattr(args, "programs_per_bug", None)
    budget = f"{programs} programs" if programs else f"{args.time_per_bug:g} s"
    print(f"agxfuzz zoo: seed {seed}, {len(variants)} variants, up to {budget} each, {jobs} jobs",
          flush=True)
    beside = default_pipelines() if getattr(args, "default_cost", False) else []
    if beside:
        print(f"beside each variant: the default campaign's {len(beside)} pipelines")
    header = f"{'variant':<34} {'caught':<7} {'seconds':>8} {'programs':>9}  {'oracle':<11} {'reduced':>8}"
    print(header)
    outcomes = []
    for variant in variants:
        # At the default campaign's cost means its settings too: guided, coverage sampled.
        outcome = run_variant(variant, seconds=None if programs else args.time_per_bug,
                              programs=programs, seed=seed, jobs=jobs, out=out,
                              beside=beside, guidance=bool(beside),
                              coverage_every=DEFAULT_COVERAGE_EVERY if beside else 0)
        outcomes.append(outcome)
        if outcome.caught:
            print(f"{variant.name:<34} {'yes':<7} {outcome.seconds:>8.2f} {outcome.programs:>9}  "
                  f"{outcome.oracle:<11} {outcome.reduced_instructions:>8}", flush=True)
        else:
            print(f"{variant.name:<34} {'NO':<7} {'-':>8} {'-':>9}  {'-':<11} {'-':>8}", flush=True)
            if outcome.message:  # why a finding was not this variant's catch
                print(f"  {outcome.message}", flush=True)
    totals = summary(outcomes)
    print(f"caught {totals['caught']} of {totals['variants']}; seconds to detection median "
          f"{_num(totals['seconds_median'])}, max {_num(totals['seconds_max'])}; reduced "
          f"reproducer median {_num(totals['reduced_median'])}, max {_num(totals['reduced_max'])} "
          "instructions")
    if args.json:
        report = {"seed": seed, "summary": totals, "variants": [
            {"name": o.variant.name, "origin": o.variant.origin, "caught": o.caught,
             "seconds": o.seconds, "programs": o.programs, "oracle": o.oracle,
             "reduced_instructions": o.reduced_instructions, "message": o.message,
             "file": o.reproducer} for o in outcomes]}
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.junit:
        _write_junit(args.junit, outcomes)
    if args.sarif:
        write_sarif(args.sarif, [(o.finding, o.files) for o in outcomes if o.caught], VERSION)
    if getattr(args, "html", None):
        write_report(args.html, out, title=f"agxfuzz zoo, seed {seed}",
                     records=[o.files.record for o in outcomes if o.caught and o.files])
    missed = [o.variant.name for o in outcomes if not o.caught] + refused
    if missed:
        print(f"agxfuzz: not caught: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


def _num(value) -> str:
    return "-" if value is None else f"{value:g}"


def _write_junit(path: str, outcomes) -> None:
    """A variant is a test case that passes when the suite caught it."""
    suite = ElementTree.Element("testsuite", name="agxfuzz.zoo", tests=str(len(outcomes)),
                                failures=str(sum(not o.caught for o in outcomes)))
    for outcome in outcomes:
        case = ElementTree.SubElement(suite, "testcase", classname="agxfuzz.zoo",
                                      name=outcome.variant.name)
        if outcome.caught:
            case.set("time", f"{outcome.seconds:.3f}")
        else:
            ElementTree.SubElement(case, "failure", message="variant not caught").text = (
                outcome.variant.description
            )
    write_atomically(Path(path), ElementTree.tostring(suite, encoding="unicode") + "\n")
