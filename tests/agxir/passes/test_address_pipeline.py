"""The address pipeline (cleanup, fuse, fold, lower, dce) on address-heavy programs: no
findings under every oracle, the promotion invariant proved, and the passes fire; the
golden files pass_address_*.agx."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import agxir.rewrite.matcher as matcher
from agxir.ir import clone_function
from agxir.passes import PASSES, address_cleanup, address_fold, address_fuse, address_lower, dce
from fuzz.campaign import CampaignConfig
from fuzz.generate import MAX_THREADS
from fuzz.generate.cases import build_case
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest
from oracles.smt.function import is_loop_free
from oracles.smt.promotion import promotion_failures

ADDRESS_PASSES = (address_cleanup.PASS, address_fuse.PASS, address_fold.PASS,
                  address_lower.PASS, dce.PASS)
PIPELINE = [PassUnderTest(p.name, p.run, ("--passes", p.name)) for p in ADDRESS_PASSES]
SEED = 2024
PROGRAMS = 200
CHUNK = 50
# z3's budget per promotion query, in the harness's oracle and the whole-pipeline check alike:
# a resource limit in tests (oracles/smt/limits.py), so the same verdicts under any load. The
# hardest of these programs (92, 150) need more than the campaign's default 2000 ms budget,
# and program 150 one query of 100-150 M units (30000 ms) depending on the queries before it.
PROMOTION_MS = 120000
BEYOND_ORDER = [r.name for r in address_cleanup.RULES if r not in address_cleanup.CONSTANT_SECOND]
GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def rule_hits(monkeypatch) -> Counter:
    """Counts the rules that rewrite (the driver builds a replacement only to apply it)."""
    hits: Counter = Counter()
    build = matcher.build

    def counting(rule, match, namer, evaluator=matcher.CONCRETE_EVALUATOR):
        hits[rule.name] += 1
        return build(rule, match, namer, evaluator)

    monkeypatch.setattr(matcher, "build", counting)
    return hits


@pytest.mark.slow  # 200 programs, each step's promotion proved by z3: minutes of CPU
@pytest.mark.parametrize("start", range(0, PROGRAMS, CHUNK))
def test_no_findings_and_the_passes_fire(start, monkeypatch):
    hits = rule_hits(monkeypatch)
    config = CampaignConfig(seed=SEED, pipelines=[PIPELINE], address_heavy=True)
    changed: Counter = Counter()
    cleanup_beyond_order = 0
    loop_free = 0
    for index in range(start, start + CHUNK):
        fn, inputs = build_case(SEED, index, config)
        harness = Harness(inputs, tv_threads=32, promotion_ms=PROMOTION_MS)
        counted = hits.copy()  # the harness runs the pipeline too: count one run only
        findings = harness.check(fn, [PIPELINE])
        hits.clear()
        hits.update(counted)
        assert not findings, (index, findings[0].pass_name, findings[0].oracle, findings[0].message)
        changed.update(harness.stats.pass_changes)
        before = sum(hits[name] for name in BEYOND_ORDER)
        after = clone_function(fn)
        for p in ADDRESS_PASSES:
            p.run(after)
        cleanup_beyond_order += sum(hits[name] for name in BEYOND_ORDER) > before
        if is_loop_free(fn):
            loop_free += 1
            assert promotion_failures(fn, after, timeout_ms=PROMOTION_MS,
                                      threads=MAX_THREADS) == [], index
    print(f"\nprograms {start}..{start + CHUNK - 1}: changed {dict(changed)}, cleanup beyond "
          f"operand order {cleanup_beyond_order}, loop-free {loop_free}")
    print("rule hits:", dict(hits.most_common()))
    for p in ADDRESS_PASSES:
        assert changed[p.name] > CHUNK // 2, (p.name, changed)
    fired = set(hits)
    for family in ("relaxed-amul-pow2-", "relaxed-amul-", "relaxed-aadd-", "strict-", "extend",
                   "lea-device_", "offset-", "lea-shift", "amul-chain-"):
        assert any(name.startswith(family) for name in fired), family


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("pass_address_*.agx")), ids=lambda p: p.name)
def test_golden(path, monkeypatch):
    """The golden files, with the address passes registered for the run (until they are in
    agxir.passes.PASSES, tests/test_golden.py cannot resolve their PASS lines)."""
    from tests.test_golden import test_golden as check

    for p in ADDRESS_PASSES:
        monkeypatch.setitem(PASSES, p.name, p)
    check(path)


def test_there_are_golden_files():
    assert len(list(GOLDEN.glob("pass_address_*.agx"))) >= 4
