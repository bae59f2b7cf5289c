"""`agxfuzz run --save-rules` / `--expect-rules`: a rule that fired in the baseline and never
fires now is a missed-rule finding (issue 19)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest

from fuzz.harness import Stats
from fuzz.rule_baseline import (
    MIN_EXPECTED_HITS,
    BaselineError,
    judge,
    load_baseline,
    rule_rates,
    write_rates,
)

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "--examples", "40", "--seed", "3", "--jobs", "1", "--guidance", "off",
       "--passes", "inline-imm", "--coverage-every", "0"]
# The pass with one rule taken out of its table, as a change that stops a rule matching
# would: the run is otherwise the same program stream through the same pass.
WITHOUT_IMM8_32 = (
    "import sys, agxir.passes.inline_imm as m\n"
    "m.RULES = tuple(r for r in m.RULES if r.name != 'imm8-32')\n"
    "from fuzz.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def agxfuzz(*args: str, without_rule: bool = False) -> subprocess.CompletedProcess:
    command = ([sys.executable, "-c", WITHOUT_IMM8_32] if without_rule
               else [sys.executable, "-m", "fuzz"])
    return subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def stats_with(programs: int, hits: dict, runs: dict | None = None) -> Stats:
    stats = Stats(programs=programs)
    stats.rule_hits = Counter(hits)
    stats.pass_runs = Counter(runs or {})
    return stats


def test_rates_list_every_rule_of_the_passes_under_test():
    rates = rule_rates(stats_with(200, {("inline-imm", "imm8-32"): 50}), ["inline-imm", "dce"], 7)
    assert rates["programs"] == 200 and rates["seed"] == 7
    assert set(rates["rules"]) == {"inline-imm"}  # dce has no rule table
    table = rates["rules"]["inline-imm"]
    assert table["imm8-32"] == {"hits": 50, "per_1000": 250.0}
    assert table["neg-64"] == {"hits": 0, "per_1000": 0.0}
    assert rates["pass_runs"] == {"inline-imm": 0}


def test_the_rate_counts_runs_of_the_pass_when_both_runs_know_them(tmp_path):
    """A baseline where the pass ran in two pipelines per program, against a run where it
    runs alone: per program the rule would look twice as likely as it is."""
    path = tmp_path / "base.json"
    write_rates(str(path), rule_rates(stats_with(1000, {("copyprop", "same-size"): 50},
                                                 {"copyprop": 2000}), ["copyprop"]))
    baseline = load_baseline(str(path))
    alone = judge(baseline, stats_with(100, {}, {"copyprop": 100}), ["copyprop"])
    assert not alone.missed and [e for _, _, e in alone.undecided] == [2.5]
    twice = judge(baseline, stats_with(100, {}, {"copyprop": 200}), ["copyprop"])
    [missed] = twice.missed
    assert missed.expected == 5.0 and "(200 runs of the pass)" in missed.message


def test_a_rule_is_missed_only_with_enough_programs_to_expect_five_hits(tmp_path):
    path = tmp_path / "base.json"
    write_rates(str(path), rule_rates(stats_with(1000, {("inline-imm", "imm8-32"): 50,
                                                        ("inline-imm", "neg-32"): 3}),
                                      ["inline-imm"]))
    baseline = load_baseline(str(path))
    # 100 programs: 5 hits expected of imm8-32 (P(none) = e^-5 < 1%), 0.3 of neg-32
    judgement = judge(baseline, stats_with(100, {}), ["inline-imm"])
    assert [(m.pass_name, m.rule) for m in judgement.missed] == [("inline-imm", "imm8-32")]
    assert judgement.missed[0].expected == MIN_EXPECTED_HITS
    assert math.exp(-judgement.missed[0].expected) < 0.01
    assert [(p, r) for p, r, _ in judgement.undecided] == [("inline-imm", "neg-32")]
    assert "50 hits in 1000 programs" in judgement.missed[0].message
    # 99 programs: 4.95 expected, not enough to call it
    assert not judge(baseline, stats_with(99, {}), ["inline-imm"]).missed
    # one hit now is not a missed rule, nor is a pass not under test
    assert not judge(baseline, stats_with(100, {("inline-imm", "imm8-32"): 1}),
                     ["inline-imm"]).missed
    assert not judge(baseline, stats_with(100, {}), ["copyprop"]).missed


@pytest.mark.parametrize("text", ["", "[]", '{"format": 1}', '{"format": 2, "programs": 1, '
                                  '"rules": {}}', '{"format": 1, "programs": 1, "rules": '
                                  '{"p": {"r": {"hits": "x"}}}}'])
def test_a_malformed_baseline_is_refused(tmp_path, text):
    path = tmp_path / "base.json"
    path.write_text(text)
    with pytest.raises(BaselineError):
        load_baseline(str(path))


def test_a_bad_expect_rules_file_is_a_one_line_usage_error(tmp_path):
    result = agxfuzz(*RUN, "--out", str(tmp_path), "--expect-rules", str(tmp_path / "none.json"))
    assert result.returncode == 2
    assert result.stderr.startswith("agxfuzz: --expect-rules ") and result.stderr.count("\n") == 1


def test_a_rule_that_stops_firing_is_a_missed_rule_finding(tmp_path):
    base = tmp_path / "base.json"
    saved = agxfuzz(*RUN, "--out", str(tmp_path / "a"), "--save-rules", str(base))
    assert saved.returncode == 0, saved.stdout + saved.stderr
    rates = json.loads(base.read_text())
    assert rates["programs"] == 40
    assert rates["rules"]["inline-imm"]["imm8-32"]["hits"] >= MIN_EXPECTED_HITS

    same = agxfuzz(*RUN, "--out", str(tmp_path / "b"), "--expect-rules", str(base))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "0 never fired here" in same.stdout

    reports = ["--json-report", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml"),
               "--sarif", str(tmp_path / "s.sarif")]
    missed = agxfuzz(*RUN, "--out", str(tmp_path / "c"), "--expect-rules", str(base), *reports,
                     without_rule=True)
    assert missed.returncode == 1, missed.stdout + missed.stderr
    assert "inline-imm: missed-rule: rule imm8-32 never fired in 40 programs" in missed.stdout
    assert "1 never fired here" in missed.stdout
    replay = next(line for line in missed.stdout.splitlines() if "replay:" in line)
    assert "--expect-rules" in replay and "--examples 40" in replay and "--seed 3" in replay
    report = json.loads((tmp_path / "r.json").read_text())
    [finding] = report["findings"]
    assert (finding["pass"], finding["oracle"]) == ("inline-imm", "missed-rule")
    assert finding["file"] is None and "--expect-rules" in finding["command"]
    suite = ElementTree.parse(tmp_path / "j.xml").getroot()
    assert suite.get("failures") == "1"
    sarif = json.loads((tmp_path / "s.sarif").read_text())
    [entry] = sarif["runs"][0]["results"]
    assert entry["ruleId"] == "missed-rule" and "--expect-rules" in entry["properties"]["replay"]
    assert "missed-rule" in {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
