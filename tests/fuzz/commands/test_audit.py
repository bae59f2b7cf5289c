"""`agxfuzz audit` (fuzz.commands.audit.run_audit), called as the CLI will call it: the table,
the summary, JSON, and the exit status for verified rules, counterexamples and timeouts."""

from __future__ import annotations

import argparse
import json

import pytest

import agxir.passes
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_, defined_by, imm, reg, zero
from fuzz.commands.audit import run_audit
from fuzz.commands.errors import UsageError


def audit(passes=None, json_path=None, timeout=2000, jobs=1, cache_dir=None) -> int:
    return run_audit(argparse.Namespace(audit_passes=passes, json=json_path, timeout=timeout,
                                        jobs=jobs, cache_dir=cache_dir,
                                        no_cache=cache_dir is None))


def test_a_verified_pass(capsys, tmp_path):
    path = tmp_path / "audit.json"
    assert audit(["branch-cmp"], str(path)) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == ("agxfuzz audit: 2 rules in 1 pass, z3 timeout 2000 ms per query, 1 job, "
                        "no proof cache")
    assert lines[1].split() == ["pass", "rule", "instances", "verdict", "median", "ms", "max", "ms"]
    assert lines[2].split()[:2] == ["branch-cmp", "icmp"] and lines[2].split()[3] == "verified"
    assert lines[3].split()[:2] == ["branch-cmp", "fcmp"] and lines[3].split()[3] == "verified"
    assert lines[-1].startswith("audit: 2 rules: 2 verified, 0 counterexample, 0 timeout, 0 error;")
    assert "s wall" in lines[-1]
    report = json.loads(path.read_text())
    assert [r["rule"] for r in report["rules"]] == ["icmp", "fcmp"]
    assert all(r["verdict"] == "verified" and r["instances"] > 0 for r in report["rules"])
    assert report["timeout_ms"] == 2000 and report["summary"] == lines[-1]


WRONG = Rule(
    "no-xor",
    Ins("if_icmp", (defined_by(Ins("icmp", (any_("a"), any_("b")),
                                   {"cond": Bind("c"), "inv": Bind("i")})), zero()),
        {"cond": "ueq", "inv": Bind("j")}),
    (Emit("if_icmp", (Use("a"), Use("b")), {"cond": Bind("c"), "inv": Bind("i")}),),
)
HARD = Rule(
    "fmul-2",
    Ins("fmul", (reg("a", size=32, abs=False, neg=False), imm(bits=0x40)), sat=False),
    (Emit("fadd", (Use("a"), Use("a"))),),
)


def test_a_counterexample_exits_1_with_values_and_replay(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(agxir.passes, "RULE_TABLES", {"wrong-branch": (WRONG,), "fine": (HARD,)})
    path = tmp_path / "audit.json"
    assert audit(json_path=str(path), timeout=1) == 1  # a counterexample outranks a timeout
    out = capsys.readouterr().out
    assert "counterexample: wrong-branch / no-xor" in out
    assert "  values: a=0x" in out and "(confirmed)" in out
    assert "  source program:\n    func @instance(" in out
    assert "timeout: fine / fmul-2: 1 instance not proved:" in out
    assert "1 counterexample, 1 timeout" in out.splitlines()[-1]
    entry = json.loads(path.read_text())["rules"][0]
    assert entry["verdict"] == "counterexample" and entry["counterexample"]["confirmed"]


def test_timeouts_only_exit_3_and_say_so(capsys, monkeypatch):
    monkeypatch.setattr(agxir.passes, "RULE_TABLES", {"hard": (HARD,)})
    assert audit(timeout=1) == 3
    summary = capsys.readouterr().out.splitlines()[-1]
    assert "1 timeout" in summary and "not proved" in summary


@pytest.mark.parametrize("name, message", [("dce", "no rewrite rules"), ("nope", "unknown pass")])
def test_pass_names_are_checked(name, message):
    with pytest.raises(UsageError, match=message) as caught:
        audit([name])
    assert caught.value.exit_status == 2


def test_unwritable_json_is_a_user_error(monkeypatch, tmp_path):
    monkeypatch.setattr(agxir.passes, "RULE_TABLES", {"b": agxir.passes.RULE_TABLES["branch-cmp"][:1]})
    with pytest.raises(Exception, match="cannot write"):
        audit(json_path=str(tmp_path / "missing" / "audit.json"))


def test_junit_and_sarif_report_unproved_rules(monkeypatch, tmp_path):
    from xml.etree import ElementTree

    monkeypatch.setattr(agxir.passes, "RULE_TABLES", {"wrong-branch": (WRONG,), "fine": (HARD,)})
    junit, sarif = tmp_path / "audit.xml", tmp_path / "audit.sarif"
    args = argparse.Namespace(json=None, timeout=1, audit_passes=None, junit=str(junit),
                              sarif=str(sarif))
    assert run_audit(args) == 1
    suite = ElementTree.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("counterexample", "error"), ("timeout", "warning"),
    ]
