"""Machine-readable campaign reports: the JSON summary and JUnit XML for CI."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

from agxir.machine.paths import PATHS
from fuzz.campaign import CampaignResult
from fuzz.findings import write_atomically


def json_report(result: CampaignResult, seed: int, units: list[str]) -> dict:
    stats = result.stats
    return {
        "seed": seed,
        "programs": stats.programs,
        "seconds": round(result.seconds, 3),
        "programs_per_second": round(result.programs_per_second, 2),
        "input_sets": stats.input_sets,
        "skipped": {
            "undefined": stats.skipped_undefined,
            "out_of_fuel": stats.skipped_out_of_fuel,
        },
        # Declined or undecided, never findings (docs/guarantees.md).
        "not_structurable": stats.unstructurable,
        "not_allocatable": stats.unallocatable,
        "inconclusive_steps": stats.inconclusive,
        "pass_runs": dict(stats.pass_runs),
        "pass_changes": {name: stats.pass_changes.get(name, 0) for name in units},
        "rule_hits": {f"{pass_name}/{rule}": count
                      for (pass_name, rule), count in sorted(stats.rule_hits.items())},
        "pass_never_changed": [name for name in units if not stats.pass_changes.get(name)],
        "pressure_paths": pressure_paths_report(stats),
        "guidance": guidance_report(result),
        "duplicate_findings": result.duplicates,
        # What a reader must know before trusting the counts: none of these is a green run.
        "interrupted": result.interrupted,
        "workers_taken_down_by_a_pass": result.worker_deaths,
        "workers_hung_past_deadline": result.hung_workers,
        "workers_killed_from_outside": list(result.outside_deaths),
        "pass_memory_limit_hits": result.memory_limit_hits,
        "internal_error": result.internal_error,
        "findings": [
            {
                "pass": finding.pass_name,
                "oracle": finding.oracle,
                "message": finding.message,
                "signature": finding.signature,
                "more_like_it": result.more_like[number] if number < len(result.more_like) else 0,
                "file": str(files.reproducer) if files and files.reproducer else None,
                "command": files.command if files else None,
            }
            for number, (finding, files) in enumerate(result.findings)
        ],
    }


def pressure_paths_report(stats) -> dict:
    """Programs that reached the machine level, and how many of them took each path the
    machine passes count (agxir.machine.paths; every path listed, 0 included)."""
    return {
        "machine_programs": stats.machine_programs,
        "reached": {path: stats.pressure_paths.get(path, 0) for path in PATHS},
        "other": {path: count for path, count in sorted(stats.pressure_paths.items())
                  if path not in PATHS},
    }


def guidance_report(result: CampaignResult) -> dict | None:
    """Features reached, the corpus, fresh programs against mutants, coverage sampling and
    its cost (the numbers the summary prints)."""
    corpus, stats = result.corpus, result.stats
    if corpus is None:
        return None
    plain = stats.programs - stats.coverage_programs
    return {
        "on": corpus.on,
        "shared_corpus": corpus.shared,
        "features": len(corpus.features),
        "features_by_kind": corpus.by_kind(),
        "features_not_in_stored_corpus": corpus.new_features if corpus.on else None,
        "corpus_size": corpus.size if corpus.on else 0,
        "corpus_loaded": len(corpus.loaded),
        "corpus_in_database_at_start": len(corpus.stored),
        "corpus_new": corpus.added,
        "corpus_new_to_database": corpus.kept,
        "corpus_other_versions": {str(v): n for v, n in sorted(corpus.other_versions.items())},
        "fresh_programs": stats.fresh_programs,
        "mutant_programs": stats.mutant_programs,
        "coverage_programs": stats.coverage_programs,
        "coverage_ms_per_program": round(1e3 * stats.coverage_seconds / stats.coverage_programs, 3)
        if stats.coverage_programs else None,
        "plain_ms_per_program": round(1e3 * stats.plain_seconds / plain, 3) if plain else None,
    }


def write_json_report(path: str, report: dict) -> None:
    write_atomically(Path(path), json.dumps(report, indent=1) + "\n")


def write_junit(path: str, result: CampaignResult, units: list[str]) -> None:
    """One test case per pass under test (and one for the input oracles); a finding is a
    failure of its pass's case."""
    names = ["(input)", *units]
    failures = {name: [] for name in names}
    for finding, files in result.findings:
        failures.setdefault(finding.pass_name, []).append((finding, files))
    # Count what was checked: every program through every pipeline is a test; a pass's
    # findings (each standing for its duplicates) are its failures.
    checked = result.stats.programs
    failed = len(result.findings) + result.duplicates
    suite = ElementTree.Element(
        "testsuite",
        name="agxfuzz",
        tests=str(max(checked, failed)),
        failures=str(failed),
        time=f"{result.seconds:.3f}",
    )
    for name, found in failures.items():
        case = ElementTree.SubElement(suite, "testcase", classname="agxfuzz.run", name=name)
        for finding, files in found:
            failure = ElementTree.SubElement(
                case, "failure", message=f"{finding.oracle}: {finding.message}"
            )
            failure.text = files.command if files else finding.message
    write_atomically(Path(path), ElementTree.tostring(suite, encoding="unicode") + "\n")


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
ORACLE_HELP = {
    "crash": "The pass raised an exception.",
    "timeout": "The pass did not finish within its time limit.",
    "memory-limit": "The pass needed more memory than --pass-memory allows it.",
    "no-change": "The pass reported no change but changed the function.",
    "verifier": "The pass produced IR the verifier rejects.",
    "liveness": "Liveness disagrees with the reference written from the definition.",
    "refinement": "The output does not refine the input in the interpreter.",
    "tv": "z3 found inputs where the output does not refine the input.",
    "promotion": "z3 could not prove that promoted 32-bit address math cannot overflow.",
    "encoding": "The pass emitted an instruction AGX cannot encode (an immediate too wide "
                "for its field, a misaligned register, a modifier the slot lacks).",
    "missed-rule": "A rule that fired in the --expect-rules baseline never fired in this "
                   "run, with enough programs that it should have.",
}


def sarif_document(results: list[dict], rules: dict[str, str], version: str) -> dict:
    """A SARIF 2.1.0 log of one agxfuzz run: `rules` maps rule ids to descriptions."""
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "agxfuzz", "version": version, "rules": [
                {"id": rule, "shortDescription": {"text": text}} for rule, text in rules.items()
            ]}},
            "results": results,
        }],
    }


def sarif_location(path, line: int) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": Path(path).as_posix()},
                                 "region": {"startLine": line}}}


def sarif_log(findings, version: str) -> dict:
    """One result per finding, located at its reproducer's function."""
    results = []
    for finding, files in findings:
        locations = []
        if files is not None and files.reproducer:  # a missed rule has none
            lines = Path(files.reproducer).read_text().splitlines()
            line = next((i for i, text in enumerate(lines, 1) if text.startswith("func @")), 1)
            locations = [sarif_location(files.reproducer, line)]
        results.append({
            "ruleId": finding.oracle,
            "level": "error",
            "message": {"text": f"{finding.pass_name}: {finding.message}"},
            "locations": locations,
            "partialFingerprints": {"agxfuzzSignature": finding.signature},
            "properties": {"pass": finding.pass_name, "pipeline": list(finding.pipeline),
                           "replay": files.command if files else None},
        })
    return sarif_document(results, ORACLE_HELP, version)


def write_sarif(path: str, findings, version: str) -> None:
    write_sarif_document(path, sarif_log(findings, version))


def write_sarif_document(path: str, document: dict) -> None:
    write_atomically(Path(path), json.dumps(document, indent=1) + "\n")
