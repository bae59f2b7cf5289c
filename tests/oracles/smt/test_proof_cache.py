"""The audit's proof cache (oracles.smt.proof_cache) and its pool of provers
(oracles.smt.audit_pool): a verified rule is taken from the cache until something it depends
on changes; nothing unproved is ever stored; proofs on a pool equal the serial ones."""

from __future__ import annotations

import argparse
import dataclasses
import json

import agxir.passes
from agxir.opcodes.table import OPCODES
from agxir.rewrite import Emit, Ins, Rule, Use, imm, reg
from fuzz.commands.audit import run_audit
from oracles.smt.audit_pool import prove_rules
from oracles.smt.proof_cache import ProofCache, rule_key, semantics_hash

HARD = Rule(
    "fmul-2",
    Ins("fmul", (reg("a", size=32, abs=False, neg=False), imm(bits=0x40)), sat=False),
    (Emit("fadd", (Use("a"), Use("a"))),),
)


def audit(cache_dir, *, passes=("branch-cmp",), no_cache=False, timeout=2000, jobs=1, json_path=None):
    args = argparse.Namespace(audit_passes=list(passes) if passes else None, json=json_path,
                              timeout=timeout, jobs=jobs, cache_dir=str(cache_dir),
                              no_cache=no_cache)
    return run_audit(args)


def test_a_second_run_takes_verified_rules_from_the_cache(capsys, tmp_path):
    assert audit(tmp_path) == 0
    first = capsys.readouterr().out
    assert "(cached)" not in first
    assert "proof cache: 0 of 2 rules taken from it" in first
    assert len(list(tmp_path.glob("*.json"))) == 2
    report = tmp_path / "audit.json"
    assert audit(tmp_path, json_path=str(report)) == 0
    second = capsys.readouterr().out
    assert second.count("verified (cached)") == 2
    assert "proof cache: 2 of 2 rules taken from it" in second and ", 0 proved now" in second
    rules = json.loads(report.read_text())["rules"]
    assert all(r["cached"] and r["verdict"] == "verified" and r["instances"] > 0 for r in rules)


def test_no_cache_proves_everything_and_leaves_the_cache_alone(capsys, tmp_path):
    assert audit(tmp_path) == 0
    stored = sorted(p.name for p in tmp_path.glob("*.json"))
    capsys.readouterr()
    assert audit(tmp_path, no_cache=True) == 0
    out = capsys.readouterr().out
    assert "(cached)" not in out and "proof cache:" not in out and "no proof cache" in out
    assert sorted(p.name for p in tmp_path.glob("*.json")) == stored


def test_a_changed_semantics_re_proves_exactly_the_rules_that_use_it(capsys, tmp_path, monkeypatch):
    assert audit(tmp_path, passes=("branch-cmp",)) == 0
    capsys.readouterr()
    # The fcmp rule's instances read fcmp; the icmp rule's do not.
    def other_fcmp(*args, **kwargs):  # a different source text: a different hash
        return OPCODES_FCMP.semantics(*args, **kwargs)

    OPCODES_FCMP = OPCODES["fcmp"]
    before = semantics_hash("fcmp")
    monkeypatch.setitem(OPCODES, "fcmp", dataclasses.replace(OPCODES_FCMP, semantics=other_fcmp))
    assert semantics_hash("fcmp") != before
    assert audit(tmp_path, passes=("branch-cmp",)) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()
            if line.startswith("branch-cmp")]
    cached = {row[1]: "(cached)" in row for row in rows}
    assert cached == {"icmp": True, "fcmp": False}


def test_a_changed_rule_has_another_key():
    rule = agxir.passes.RULE_TABLES["branch-cmp"][0]
    changed = dataclasses.replace(rule, name=rule.name + "-renamed")
    assert rule_key("branch-cmp", rule) == rule_key("branch-cmp", rule)
    assert rule_key("branch-cmp", rule) != rule_key("branch-cmp", changed)
    assert rule_key("branch-cmp", rule) != rule_key("other-pass", rule)


def test_a_timeout_is_never_cached(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(agxir.passes, "RULE_TABLES", {"hard": (HARD,)})
    assert audit(tmp_path, passes=None, timeout=1) == 3
    assert not list(tmp_path.glob("*.json"))
    capsys.readouterr()
    assert audit(tmp_path, passes=None, timeout=1) == 3
    assert "(cached)" not in capsys.readouterr().out


def test_an_entry_that_is_not_a_verified_proof_is_ignored(tmp_path):
    cache = ProofCache(tmp_path)
    (tmp_path / "k.json").write_text(json.dumps({"format": 1, "verdict": "timeout", "semantics": {}}))
    (tmp_path / "bad.json").write_text("{not json")
    assert cache.get("k") is None and cache.get("bad") is None and cache.get("missing") is None


def test_proofs_on_a_pool_equal_the_serial_proofs():
    tables = {name: agxir.passes.RULE_TABLES[name] for name in ("branch-cmp", "cmpsel")}
    items = [(name, rule) for name, rules in tables.items() for rule in rules]
    serial = prove_rules(items, 2000, jobs=1)
    shown = []
    pooled = prove_rules(items, 2000, jobs=2, report=lambda p: shown.append(p.rule))
    assert shown == [rule.name for _, rule in items]  # reported in order
    assert [(p.rule, p.verdict, p.instances) for p in pooled] == [
        (p.rule, p.verdict, p.instances) for p in serial
    ]


def test_a_counterexample_found_on_a_pool_comes_back_whole(monkeypatch):
    from tests.fuzz.commands.test_audit import WRONG

    proofs = prove_rules([("wrong-branch", WRONG), ("branch-cmp", agxir.passes.RULE_TABLES["branch-cmp"][0])],
                         2000, jobs=2)
    assert [p.verdict for p in proofs] == ["counterexample", "verified"]
    assert proofs[0].counterexample is not None
