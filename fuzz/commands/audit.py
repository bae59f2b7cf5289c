"""`agxfuzz audit`: prove every rewrite rule of every pass with z3 and print one table.

For each rule of each rule table (`agxir.passes.RULE_TABLES`, or the passes named with
`--pass`), `oracles.smt.rules.prove_rule` checks every distinct instance with a per-query
timeout. The table gives pass, rule, instances, verdict (verified / counterexample / timeout
/ error) and the median and worst solve time per rule; a summary line gives the total wall
time. Each counterexample follows the table with its concrete values, the source and target
it was replayed on, and whether the interpreter confirmed it; each timeout lists the
instances z3 could not decide, which are not proved.

Exit status: 1 if any rule has a counterexample or cannot be proved at all (error), else 3
if any rule timed out, else 0. `--json FILE` writes the same results as JSON.
"""

from __future__ import annotations

import inspect
import json
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import agxir.passes as passes
from agxir.passes import PASSES
from fuzz import VERSION
from fuzz.campaign import default_jobs
from fuzz.ci_reports import sarif_document, sarif_location, write_sarif_document
from fuzz.commands.errors import UsageError
from fuzz.commands.nir_audit import run_nir_audit
from fuzz.findings import write_atomically
from oracles.smt.audit_pool import prove_rules
from oracles.smt.proof_cache import ProofCache, default_cache_dir

DEFAULT_TIMEOUT_MS = 2000
COLUMNS = ("pass", "rule", "instances", "verdict", "median ms", "max ms")


def _tables(names: list[str] | None) -> dict:
    tables = passes.RULE_TABLES
    if not names:
        return dict(tables)
    chosen = {}
    for name in names:
        if name in tables:
            chosen[name] = tables[name]
        elif name in passes.PASSES:
            raise UsageError(f"agxfuzz audit: pass {name} has no rewrite rules to prove")
        else:
            raise UsageError(
                f"agxfuzz audit: unknown pass {name!r}; passes with rules: {', '.join(tables)}"
            )
    return chosen


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _row(cells) -> str:
    pass_name, rule, instances, verdict, median, worst = cells
    return f"{pass_name:<24} {rule:<20} {instances:>9}  {verdict:<14} {median:>9} {worst:>9}"


def _ms(value: float) -> str:
    return f"{value:.1f}"


def _print_counterexample(proof) -> None:
    found = proof.counterexample
    print(f"\ncounterexample: {proof.pass_name} / {proof.rule}")
    print(f"  instance: {found.instance}")
    if found.values:
        shown = ", ".join(f"{name}={value:#x}" for name, value in found.values.items())
        print(f"  values: {shown}")
    if found.memory is not None:
        print(f"  memory: {found.memory.hex()}")
    confirmed = "confirmed" if found.confirmed else "NOT confirmed"
    print(f"  source: {found.source_outcome}; target: {found.target_outcome} ({confirmed}"
          f"{': ' + found.note if found.note else ''})")
    for title, text in (("source", found.source), ("target", found.target)):
        if text:
            print(f"  {title} program:")
            print("".join(f"    {line}\n" for line in text.splitlines()), end="")


def _print_details(proofs) -> None:
    for proof in proofs:
        if proof.counterexample is not None:
            _print_counterexample(proof)
        if proof.error:
            print(f"\nerror: {proof.pass_name} / {proof.rule}: {proof.error}")
        if proof.timeouts:
            print(f"\ntimeout: {proof.pass_name} / {proof.rule}: "
                  f"{_plural(len(proof.timeouts), 'instance')} not proved:")
            for description in proof.timeouts[:5]:
                print(f"  {description}")
            if len(proof.timeouts) > 5:
                print(f"  ... and {len(proof.timeouts) - 5} more")


def _summary(proofs, seconds: float, timeout_ms: int) -> str:
    counts = {v: sum(p.verdict == v for p in proofs) for v in ("verified", "counterexample",
                                                               "timeout", "error")}
    line = (f"audit: {len(proofs)} rules: {counts['verified']} verified, "
            f"{counts['counterexample']} counterexample, {counts['timeout']} timeout, "
            f"{counts['error']} error; {seconds:.1f} s wall, z3 timeout {timeout_ms} ms per query")
    if counts["timeout"]:
        line += f" ({_plural(counts['timeout'], 'rule')} not proved: raise --timeout to try harder)"
    return line


def _json(proofs, seconds: float, timeout_ms: int) -> dict:
    rules = []
    for p in proofs:
        entry = {
            "pass": p.pass_name, "rule": p.rule, "verdict": p.verdict, "instances": p.instances,
            "queries": len(p.times_ms), "median_ms": round(p.median_ms, 3),
            "max_ms": round(p.max_ms, 3), "seconds": round(p.seconds, 3),
            "timeouts": p.timeouts, "error": p.error or None, "counterexample": None,
            "cached": p.cached,
        }
        if p.counterexample is not None:
            c = p.counterexample
            entry["counterexample"] = {
                "instance": c.instance, "values": c.values,
                "memory": c.memory.hex() if c.memory is not None else None,
                "source": c.source, "target": c.target, "source_outcome": c.source_outcome,
                "target_outcome": c.target_outcome, "confirmed": c.confirmed, "note": c.note,
            }
        rules.append(entry)
    return {"timeout_ms": timeout_ms, "seconds": round(seconds, 3), "rules": rules,
            "summary": _summary(proofs, seconds, timeout_ms)}


def exit_status(proofs) -> int:
    verdicts = {p.verdict for p in proofs}
    if verdicts & {"counterexample", "error"}:
        return 1
    return 3 if "timeout" in verdicts else 0


def run_audit(args) -> int:
    """Arguments: `json` (path or None), `timeout` (ms), `audit_passes` (names or None)."""
    if getattr(args, "nir", None):
        if getattr(args, "audit_passes", None) or getattr(args, "junit", None) or getattr(
                args, "sarif", None):
            raise UsageError("agxfuzz audit: --nir cannot be combined with --pass, --junit "
                             "or --sarif")

        return run_nir_audit(args)
    if getattr(args, "lists", None) or getattr(args, "sizes", None):
        raise UsageError("agxfuzz audit: --lists and --sizes need --nir FILE")

    timeout_ms = getattr(args, "timeout", None) or DEFAULT_TIMEOUT_MS
    if timeout_ms < 1:
        raise UsageError("agxfuzz audit: --timeout must be at least 1 ms")
    jobs = getattr(args, "jobs", None) or default_jobs()
    cache = None
    if not getattr(args, "no_cache", False):
        cache = ProofCache(getattr(args, "cache_dir", None) or default_cache_dir())
    tables = _tables(getattr(args, "audit_passes", None))
    items = [(pass_name, rule) for pass_name, rules in tables.items() for rule in rules]
    where = f"proof cache {cache.directory}" if cache is not None else "no proof cache"
    print(f"agxfuzz audit: {_plural(len(items), 'rule')} in "
          f"{_plural(len(tables), 'pass', 'passes')}, z3 timeout {timeout_ms} ms per query, "
          f"{_plural(jobs, 'job')}, {where}", flush=True)
    print(_row(COLUMNS))
    start = time.perf_counter()

    def report(proof) -> None:
        verdict = proof.verdict + (" (cached)" if proof.cached else "")
        print(_row((proof.pass_name, proof.rule, proof.instances, verdict,
                    _ms(proof.median_ms), _ms(proof.max_ms))), flush=True)

    proofs = prove_rules(items, timeout_ms, jobs=jobs, cache=cache, report=report)
    seconds = time.perf_counter() - start
    _print_details(proofs)
    print(_summary(proofs, seconds, timeout_ms))
    cached = sum(p.cached for p in proofs)
    if cache is not None:
        print(f"proof cache: {cached} of {_plural(len(proofs), 'rule')} taken from it "
              f"(verified before, nothing they depend on changed), {len(proofs) - cached} "
              "proved now; --no-cache proves all")
    if getattr(args, "json", None):
        try:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(_json(proofs, seconds, timeout_ms), handle, indent=2)
                handle.write("\n")
        except OSError as error:
            raise UsageError(f"{args.json}: cannot write: {error.strerror or error}") from None
    if getattr(args, "junit", None):
        _write_junit(args.junit, proofs)
    if getattr(args, "sarif", None):
        _write_sarif(args.sarif, proofs)
    sys.stdout.flush()
    return exit_status(proofs)


def _rule_location(pass_name: str):
    """The pass module that declares the rule (rules are built in code, often in loops,
    so the module is the honest granularity)."""
    found = PASSES.get(pass_name)
    module = inspect.getmodule(found.run) if found else None
    return module.__file__ if module else None


def _write_junit(path: str, proofs) -> None:
    """A test case per rule: a counterexample or error fails it, a timeout skips it."""
    suite = ElementTree.Element(
        "testsuite", name="agxfuzz.audit", tests=str(len(proofs)),
        failures=str(sum(p.verdict in ("counterexample", "error") for p in proofs)),
        skipped=str(sum(p.verdict == "timeout" for p in proofs)),
    )
    for proof in proofs:
        case = ElementTree.SubElement(suite, "testcase", classname=f"agxfuzz.audit.{proof.pass_name}",
                                      name=proof.rule, time=f"{proof.seconds:.3f}")
        if proof.verdict in ("counterexample", "error"):
            ElementTree.SubElement(case, "failure", message=proof.verdict).text = (
                proof.error or str(proof.counterexample)
            )
        elif proof.verdict == "timeout":
            ElementTree.SubElement(case, "skipped", message="timeout: not proved")
    write_atomically(Path(path), ElementTree.tostring(suite, encoding="unicode") + "\n")


def _write_sarif(path: str, proofs) -> None:
    results = []
    for proof in proofs:
        if proof.verdict == "verified":
            continue
        where = _rule_location(proof.pass_name)
        results.append({
            "ruleId": proof.verdict,
            "level": "warning" if proof.verdict == "timeout" else "error",
            "message": {"text": f"{proof.pass_name}: rule {proof.rule}: {proof.verdict}"
                        + (f": {proof.error}" if proof.error else "")},
            "locations": [sarif_location(where, 1)] if where else [],
        })
    rules = {
        "counterexample": "z3 found inputs where the rule's replacement does not refine its pattern.",
        "timeout": "z3 did not decide the rule in time: it is not proved.",
        "error": "The rule could not be instantiated or proved.",
    }
    write_sarif_document(path, sarif_document(results, rules, VERSION))
