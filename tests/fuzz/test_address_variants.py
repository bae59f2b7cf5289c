"""The wrong address variants (fuzz.zoo.address_variants): z3 refutes each of their rules
with a counterexample the interpreter confirms, and the harness catches each variant on
address-heavy generated programs."""

from __future__ import annotations

import pytest

from agxir.ir import clone_function
from agxir.text import print_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.harness import Harness
from fuzz.passes_under_test import python_pass
from fuzz.zoo import address_variants
from oracles.smt.rules import prove_rule

PROOF_MS = 5000
MAX_PROGRAMS = 300
NAMES = list(address_variants.RUNS)


@pytest.mark.parametrize("name", NAMES)
def test_every_wrong_rule_is_refuted_and_confirmed(name):
    for rule in address_variants.WRONG_RULES[name]:
        proof = prove_rule(rule, PROOF_MS, name)
        assert proof.verdict == "counterexample", (rule.name, proof.verdict, proof.error)
        example = proof.counterexample
        assert example.confirmed, (rule.name, example)
        assert example.source_outcome.startswith("returned"), example
        assert example.source_outcome != example.target_outcome


def test_the_aadd_promotion_the_last_variant_departs_from_is_right():
    for rule in address_variants.AADD_PROMOTION_RULES:
        proof = prove_rule(rule, PROOF_MS)
        assert proof.verdict == "verified" and not proof.timeouts, (rule.name, proof)


@pytest.mark.parametrize("name", NAMES)
def test_the_harness_catches_it(name):
    variant = address_variants.make_pass(name)
    config = CampaignConfig(seed=1, pipelines=[[variant]], address_heavy=True)
    for index in range(MAX_PROGRAMS):
        fn, inputs = build_case(config.seed, index, config)
        findings = Harness(inputs).check(fn, [[variant]])
        if findings:
            finding = findings[0]
            assert finding.pass_name == variant.name
            assert finding.oracle == "refinement", finding
            print(f"\n{name}: caught at program {index}: {finding.message}")
            return
    pytest.fail(f"{name} not caught in {MAX_PROGRAMS} address-heavy programs")


@pytest.mark.parametrize("name", NAMES)
def test_replayable_from_the_command_line(name):
    variant = address_variants.make_pass(name)
    flag, spec = variant.flag
    assert flag == "--pass"
    loaded = python_pass(spec)  # what `agxfuzz run --pass SPEC` loads
    fn, _ = build_case(1, 0, CampaignConfig(seed=1, pipelines=[], address_heavy=True))
    ours, theirs = clone_function(fn), clone_function(fn)
    assert variant.run(ours) == loaded.run(theirs)
    assert print_function(ours) == print_function(theirs)


def test_zoo_entries():
    assert [v.name for v in address_variants.VARIANTS] == NAMES
    for entry in address_variants.VARIANTS:
        assert entry.address_heavy and entry.make_pass().name == entry.name
