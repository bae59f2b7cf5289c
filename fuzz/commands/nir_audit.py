"""`agxfuzz audit --nir FILE`: prove every rule of a Mesa nir_algebraic rule file with z3.

The file is Python and is executed to read its module-level rule lists (`--lists` picks
some), see `agxir.nir.rulefile`. Each rule is instantiated at every consistent bit-size
assignment (free sizes from `--sizes`) and each instance gets a verdict from
`oracles.smt.nir`: verified, counterexample (replayed concretely), unsupported (naming the
opcode, size or unmodelled predicate), timeout, or error (a malformed rule). The table has
one row per instance; counterexamples, unsupported reasons, timeouts, errors and how every
predicate was treated follow; the summary line counts instances per verdict, overall and
for integer rules (those without a float-typed opcode), with the wall time.

Exit status: 1 if any instance has a counterexample or a rule is malformed; else 3 if any
instance is not proved (timeout or unsupported: never a false green); else 0. A file that
cannot be read or run is exit 2 with `file:line: message`. `--json FILE` writes it all.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from agxir.nir import DEFAULT_SIZES, RuleFileError, load_rule_file
from fuzz.commands.errors import UsageError
from oracles.smt.nir import prove_rule

DEFAULT_TIMEOUT_MS = 2000
VERDICT_ORDER = ("verified", "counterexample", "unsupported", "timeout", "error")


def parse_sizes(text: str | None) -> tuple[int, ...]:
    if not text:
        return DEFAULT_SIZES
    sizes = []
    for part in text.split(","):
        part = part.strip()
        if part not in ("1", "8", "16", "32", "64"):
            raise UsageError(f"agxfuzz audit: --sizes takes bit sizes from 1,8,16,32,64, not {part!r}")
        sizes.append(int(part))
    return tuple(sorted(set(sizes)))


def parse_lists(text: str | None) -> list[str] | None:
    if not text:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError("agxfuzz audit: --lists needs at least one list name")
    return names


def _row(cells) -> str:
    where, sizes, kind, verdict, ms, rule = cells
    return f"{where:<24} {sizes:<34} {kind:<5} {verdict:<14} {ms:>8}  {rule}"


def _short(text: str, width: int = 90) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def prove_file(rule_file, sizes, timeout_ms: int, progress=None) -> list:
    results = []
    for rule in rule_file.rules():
        for result in prove_rule(rule, timeout_ms, sizes):
            results.append(result)
            if progress:
                progress(result)
    return results


def _counts(results, integer_only: bool = False) -> Counter:
    return Counter(r.verdict for r in results if not (integer_only and r.float_rule))


def summary(path: str, results, rules: int, seconds: float, timeout_ms: int) -> str:
    counts = _counts(results)
    integer = [r for r in results if not r.float_rule]
    integer_counts = _counts(integer)
    decided = integer_counts["verified"] + integer_counts["counterexample"]
    shown = ", ".join(f"{counts[v]} {v}" for v in VERDICT_ORDER)
    return (f"nir audit: {Path(path).name}: {len(results)} instances of {rules} rules: {shown}; "
            f"integer rules: {decided} of {len(integer)} instances decided "
            f"({integer_counts['verified']} verified, {integer_counts['counterexample']} "
            f"counterexample); {seconds:.1f} s wall, z3 timeout {timeout_ms} ms per query")


def _print_details(results) -> None:
    for r in results:
        c = r.counterexample
        if r.verdict == "counterexample" and c is not None:
            print(f"\ncounterexample: {r.where} {r.label}: {r.rule}")
            print("  values: " + ", ".join(f"{n}={v:#x}" for n, v in c.values.items()))
            target = ("undefined (" + "; ".join(c.target_undefined) + ")"
                      if c.target_undefined else f"{c.target:#x}")
            confirmed = "confirmed by concrete replay" if c.confirmed else "NOT confirmed by replay"
            print(f"  search: {c.source:#x}; replacement: {target} ({confirmed})")
    reasons = Counter(r.reason for r in results if r.verdict == "unsupported")
    if reasons:
        print("\nunsupported (not proved):")
        for reason, count in reasons.most_common():
            print(f"  {count:>5}  {reason}")
    for verdict in ("timeout", "error"):
        chosen = [r for r in results if r.verdict == verdict]
        if chosen:
            print(f"\n{verdict} ({len(chosen)}, not proved):")
            for r in chosen[:20]:
                print(f"  {r.where} {r.label}: {r.reason}")
            if len(chosen) > 20:
                print(f"  ... and {len(chosen) - 20} more")


def predicate_table(results) -> dict[str, dict]:
    table: dict[str, dict] = {}
    for r in results:
        for label, how in r.treatments:
            key = label.split("(", 1)[1].rstrip(")") if "(" in label and not label.startswith(
                ("~", "condition")) else label
            entry = table.setdefault(key, {"treatment": how, "instances": 0})
            entry["instances"] += 1
    return table


def _print_predicates(results) -> None:
    table = predicate_table(results)
    if not table:
        return
    print("\npredicates, flags and conditions (assumed: a constraint in the proof; no meaning: "
          "values unconstrained; unmodelled: a counterexample becomes unsupported):")
    for key, entry in sorted(table.items(), key=lambda kv: (kv[1]["treatment"], kv[0])):
        print(f"  {entry['treatment']:<11} {entry['instances']:>5}  {_short(key, 100)}")


def _json(path, results, rules, seconds, timeout_ms, sizes) -> dict:
    instances = []
    for r in results:
        c = r.counterexample
        instances.append({
            "list": r.list_name, "index": r.index, "line": r.line, "rule": r.rule,
            "sizes": r.label, "float_rule": r.float_rule, "verdict": r.verdict,
            "ms": round(r.ms, 3), "reason": r.reason or None, "encoding": r.encoding,
            "predicates": [{"name": n, "treatment": t} for n, t in r.treatments],
            "counterexample": None if c is None else {
                "values": c.values, "search": c.source, "replacement": c.target,
                "replacement_undefined": c.target_undefined, "confirmed": c.confirmed,
                "unless": c.unless},
        })
    return {"file": path, "timeout_ms": timeout_ms, "sizes": list(sizes),
            "seconds": round(seconds, 3), "rules": rules, "instances": instances,
            "predicates": predicate_table(results),
            "summary": summary(path, results, rules, seconds, timeout_ms)}


def exit_status(results) -> int:
    verdicts = {r.verdict for r in results}
    if verdicts & {"counterexample", "error"}:
        return 1
    return 3 if verdicts & {"timeout", "unsupported"} else 0


def run_nir_audit(args) -> int:
    """Arguments: `nir` (path), `lists`, `sizes` (comma-separated text or None), `timeout`
    (ms), `json` (path or None)."""
    timeout_ms = getattr(args, "timeout", None) or DEFAULT_TIMEOUT_MS
    sizes = parse_sizes(getattr(args, "sizes", None))
    try:
        rule_file = load_rule_file(args.nir, parse_lists(getattr(args, "lists", None)))
    except RuleFileError as error:
        raise UsageError(f"agxfuzz: {error}") from None
    rules = sum(len(entries) for entries in rule_file.lists.values())
    print(f"agxfuzz audit --nir {args.nir}: {rules} rules in {len(rule_file.lists)} lists "
          f"({', '.join(rule_file.lists)}), free sizes {','.join(map(str, sizes))}, "
          f"z3 timeout {timeout_ms} ms per query", flush=True)
    print(_row(("rule", "sizes", "kind", "verdict", "ms", "search -> replacement")))
    start = time.perf_counter()

    def progress(r):
        print(_row((r.where, _short(r.label, 34), "float" if r.float_rule else "int", r.verdict,
                    f"{r.ms:.1f}", _short(r.rule))), flush=True)

    results = prove_file(rule_file, sizes, timeout_ms, progress)
    seconds = time.perf_counter() - start
    _print_details(results)
    _print_predicates(results)
    print(summary(args.nir, results, rules, seconds, timeout_ms))
    if getattr(args, "json", None):
        try:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(_json(args.nir, results, rules, seconds, timeout_ms, sizes), handle,
                          indent=2)
                handle.write("\n")
        except OSError as error:
            raise UsageError(f"{args.json}: cannot write: {error.strerror or error}") from None
    return exit_status(results)
