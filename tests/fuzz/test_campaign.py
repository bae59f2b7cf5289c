"""`agxfuzz run` and `agxfuzz check` as a user runs them: bugs caught, findings written,
reports, replay, exit codes."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]
WRONG_CMPSEL = f"{ROOT / 'examples' / 'wrong_cmpsel.py'}:wrong_cmpsel"


def agxfuzz(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess:
    """The command line; `timeout` only keeps a hung run from hanging CI (every budget here
    is a number of programs, never time)."""
    return subprocess.run(
        [sys.executable, "-m", "fuzz", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout,
    )


def test_a_wrong_cmpsel_given_through_pass_is_found_within_500_programs(tmp_path):
    result = agxfuzz(
        "run", "--pass", WRONG_CMPSEL, "--examples", "500", "--seed", "11", "--fail-fast",
        "--jobs", "2", "--out", str(tmp_path / "findings"),
        "--json-report", str(tmp_path / "report.json"),
        "--junit", str(tmp_path / "junit.xml"), "--sarif", str(tmp_path / "findings.sarif"),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert 0 < report["programs"] < 500  # found, and --fail-fast stopped the run there
    for key in ("programs", "seconds", "programs_per_second", "skipped", "pass_changes"):
        assert key in report
    # With two workers, the other may report before it sees the stop: at least one finding.
    findings = report["findings"]
    assert findings
    finding = findings[0]
    assert (finding["pass"], finding["oracle"]) == ("wrong_cmpsel:wrong_cmpsel", "refinement")
    reproducer = Path(finding["file"])
    assert reproducer.exists() and reproducer.with_suffix(".json").exists()
    assert not list((tmp_path / "findings").glob(".*.tmp"))
    suite = ElementTree.parse(tmp_path / "junit.xml").getroot()
    # A failure per finding and per duplicate dropped: one, or more when the second worker
    # also found before it saw the stop (a race of the two processes, not the verdict).
    assert suite.get("failures") == str(len(findings) + report["duplicate_findings"])
    assert int(suite.get("failures")) >= 1
    sarif = json.loads((tmp_path / "findings.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    result_entry = sarif["runs"][0]["results"][0]
    assert len(sarif["runs"][0]["results"]) == len(findings)
    assert result_entry["ruleId"] == "refinement"
    location = result_entry["locations"][0]["physicalLocation"]
    lines = Path(location["artifactLocation"]["uri"]).read_text().splitlines()
    assert lines[location["region"]["startLine"] - 1].startswith("func @")
    replay = shlex.split(finding["command"])
    assert replay[:2] == ["agxfuzz", "check"]
    replayed = agxfuzz(*replay[1:])
    assert replayed.returncode == 1
    assert "refinement" in replayed.stdout


def test_every_registered_pass_runs_and_a_seed_replays_the_run(tmp_path):
    reports = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        result = agxfuzz("run", "--examples", "24", "--seed", "5", "--jobs", "2",
                         "--out", str(tmp_path / "f"), "--json-report", str(path))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "programs checked: 24" in result.stdout
        assert "rule hits per 1,000 programs" in result.stdout
        reports.append(json.loads(path.read_text()))
    first, second = reports
    for key in ("programs", "input_sets", "skipped", "pass_runs", "pass_changes", "rule_hits",
                "findings"):
        assert first[key] == second[key]
    from agxir.machine.pipeline import MACHINE_PASSES
    from agxir.passes import PASSES

    assert set(first["pass_changes"]) == set(PASSES) | set(MACHINE_PASSES)
    assert first["pass_changes"]["dce"] > 0 and first["pass_changes"]["cmpsel"] > 0
    assert first["pass_changes"]["ra"] > 0 and first["pass_changes"]["lower-copies"] > 0
    # every change a rule-table pass made came from some rule, and is counted
    assert sum(n for key, n in first["rule_hits"].items() if key.startswith("copyprop/")) >= (
        first["pass_changes"]["copyprop"])


def test_an_external_pass_command(tmp_path):
    identity = agxfuzz("run", "--pass-cmd", "cat", "--examples", "6", "--jobs", "1",
                       "--seed", "2", "--out", str(tmp_path))
    assert identity.returncode == 0, identity.stdout + identity.stderr
    assert "cmd:cat" in identity.stdout
    broken = agxfuzz("run", "--pass-cmd", "echo not ir", "--examples", "3", "--jobs", "1",
                     "--seed", "2", "--out", str(tmp_path))
    assert broken.returncode == 1
    assert "crash" in broken.stdout and "malformed IR" in broken.stdout


def test_bad_usage_exits_2():
    assert agxfuzz("run", "--time", "0").returncode == 2
    assert agxfuzz("run", "--passes", "no-such-pass", "--examples", "1").returncode == 2
    assert agxfuzz("run", "--examples", "1", "--time", "3").returncode == 2
    assert agxfuzz("run", "--pass", "nowhere:nothing", "--examples", "1").returncode == 2


def test_opt_prints_the_transformed_function():
    result = agxfuzz("opt", "tests/golden/pass_cmpsel_icmp_swap.agx", "-p", "cmpsel,dce")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("; cmpsel: changed\n; dce: changed\n")
    assert "icmpsel" in result.stdout and "= icmp " not in result.stdout


def test_repro_replays_a_finding_record(tmp_path):
    out = tmp_path / "findings"
    agxfuzz("run", "--pass", WRONG_CMPSEL, "--examples", "500", "--seed", "4", "--jobs", "1",
            "--fail-fast", "--out", str(out))
    record_path = min(p for p in out.glob("*.json") if not p.name.endswith(".inputs.json"))
    still = agxfuzz("repro", str(record_path))
    assert still.returncode == 1 and "still fails" in still.stdout
    record = json.loads(record_path.read_text())
    record["flags"] = ["--passes", "cmpsel"]  # the fixed pass
    record_path.write_text(json.dumps(record))
    fixed = agxfuzz("repro", str(record_path))
    assert fixed.returncode == 0 and "no longer fails" in fixed.stdout
    assert agxfuzz("repro", str(tmp_path / "nothing.json")).returncode == 2  # not "still fails"


def test_findings_are_reduced_before_they_are_written(tmp_path):
    from agxir.text import parse_function

    # seed 4's first catch reduces to 9 instructions at generator 10 (at most 8 at 9); unreduced,
    # generated programs are several times larger
    for flag, limit in (([], 10), (["--no-reduce"], None)):
        out = tmp_path / ("reduced" if not flag else "raw")
        result = agxfuzz("run", "--pass", WRONG_CMPSEL, "--examples", "500", "--seed", "4",
                         "--jobs", "1", "--fail-fast", "--out", str(out), *flag)
        assert result.returncode == 1
        sizes = [parse_function(p.read_text()).instruction_count() for p in out.glob("*.agx")]
        assert sizes
        if limit:
            assert max(sizes) <= limit
        else:
            assert min(sizes) > 10
