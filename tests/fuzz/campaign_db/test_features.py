"""Features a program reaches while checked: passes that changed it, rules that fired or
near-missed (and where), oracle paths, and sampled branch coverage of the passes."""

from __future__ import annotations

import argparse

import pytest

from agxir.passes import RULE_TABLES
from agxir.rewrite import match_at
from agxir.rewrite import matcher as matcher_module
from agxir.rewrite.matcher import definitions, match_or_where, recording_near_misses
from agxir.text import parse_function
from fuzz.campaign import CampaignConfig
from fuzz.campaign_db.features import CoverageSampler, undefined_reason
from fuzz.commands.units import units_under_test
from fuzz.generate.cases import build_case
from fuzz.harness import Harness
from fuzz.passes_under_test import registered
from oracles.inputs import InputSet

CMPSEL = """func @f(u0:32, u1:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %t:16 = icmp %tid, u0 cond=ult inv=0
  %r:32 = icmpsel %t, #IMM, u1, #100 cond=ueq
  export %r slot=0
  stop
}
"""

BRANCH = """func @f(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  if_icmp LEFT, #2 cond=ult inv=0 -> small, large
small:
  %a:32 = iadd %tid, u0 shift=1
  jump -> join
large:
  %b:32 = iadd %tid, u0 shift=0
  jump -> join
join:
  %r:32 = phi [%a, small], [%b, large]
  export %r slot=0
  stop
}
"""


def features(text: str, input_sets, pipelines=()) -> set[str]:
    harness = Harness(input_sets)
    assert harness.check(parse_function(text), [list(p) for p in pipelines]) == []
    return harness.features


def test_a_rule_that_fires_and_one_that_near_misses_where_it_failed():
    cmpsel = [[registered("cmpsel")]]
    inputs = [InputSet(4, {"u0": 2, "u1": 7}, {})]
    fired = features(CMPSEL.replace("IMM", "0"), inputs, cmpsel)
    assert {"changed:cmpsel", "changed:cmpsel@0", "rule:cmpsel/icmp-inv0-swap"} <= fired
    assert not any(f.startswith("near:cmpsel/icmp-inv0-swap/") for f in fired)
    missed = features(CMPSEL.replace("IMM", "1"), inputs, cmpsel)
    assert "near:cmpsel/icmp-inv0-swap/src1" in missed  # the select's #0 is #1 here
    assert not any(f.startswith(("rule:", "changed:")) for f in missed)


def test_near_misses_are_looked_for_only_while_someone_listens(monkeypatch):
    def fail(*args):
        raise AssertionError("near misses looked for with no listener")

    monkeypatch.setattr(matcher_module, "_match_or_where", fail)  # what recording runs
    fn = parse_function(CMPSEL.replace("IMM", "1"))
    registered("cmpsel").run(fn)  # nobody listens: the matcher's own path
    with pytest.raises(AssertionError), recording_near_misses():
        registered("cmpsel").run(fn)


def test_match_or_where_agrees_with_match_at_on_generated_programs():
    config = CampaignConfig(seed=3, pipelines=[])
    compared = wheres = 0
    for index in range(12):
        fn, _ = build_case(3, index, config)
        defs = definitions(fn)
        for rules in RULE_TABLES.values():
            for rule in rules:
                for root in fn.instructions():
                    sites = range(len(root.srcs)) if rule.focused else (None,)
                    for site in sites:
                        want = match_at(rule, root, defs, site)
                        got = match_or_where(rule, root, defs, site)
                        compared += 1
                        if want is None:
                            assert isinstance(got, str)
                            wheres += got != "root"
                        else:
                            assert not isinstance(got, str)
                            assert got.matched == want.matched
                            assert dict(got.bindings) == dict(want.bindings)
    assert compared > 1000 and wheres > 0


def test_divergent_means_lanes_of_one_input_set_branch_apart():
    assert "oracle:divergent" in features(BRANCH.replace("LEFT", "%tid"),
                                          [InputSet(4, {"u0": 1}, {})])
    # Each set branches on its own uniform: the sets go different ways, no set diverges.
    uniform = BRANCH.replace("LEFT", "u0")
    sets = [InputSet(3, {"u0": 1}, {}), InputSet(3, {"u0": 9}, {})]
    assert "oracle:divergent" not in features(uniform, sets)
    assert "oracle:returned" in features(uniform, sets)


def test_undefined_and_out_of_fuel_paths():
    amul = """func @f(u0:32, u1:32) {
block0:
  %p:32 = amul u0, u1
  export %p slot=0
  stop
}
"""
    reached = features(amul, [InputSet(1, {"u0": 0x10000, "u1": 0x8000}, {})])
    assert "oracle:undefined" in reached
    assert any(f.startswith("oracle:undefined:amul") for f in reached), reached
    forever = "func @f() {\nentry:\n  jump -> spin\nspin:\n  jump -> spin\n}\n"
    harness = Harness([InputSet(2, {}, {})], fuel=50)
    harness.check(parse_function(forever), [])
    assert harness.features == {"oracle:out-of-fuel"}


def test_undefined_reasons_lose_their_numbers():
    assert undefined_reason("load at 0x100000040 out of bounds of u3") == undefined_reason(
        "load at 0x100000080 out of bounds of u3")


def test_the_coverage_sampler_turns_branch_arcs_of_the_passes_into_features():
    sampler = CoverageSampler(4)
    assert [sampler.wants(i) for i in range(5)] == [True, False, False, False, True]
    harness = Harness([InputSet(4, {"u0": 2, "u1": 7}, {})])
    arcs: set[str] = set()
    with sampler.measuring(arcs):
        harness.check(parse_function(CMPSEL.replace("IMM", "0")), [[registered("cmpsel")]])
    if sampler.unavailable:  # run under another tracer (a debugger, pytest-cov)
        assert not arcs
        return
    assert arcs and all(a.startswith("arc:agxir/") for a in arcs)
    assert any(a.startswith("arc:agxir/passes/cmpsel.py:") for a in arcs), sorted(arcs)[:5]
    assert not CoverageSampler(0).wants(0)


def test_the_machine_levels_printer_and_verifier_are_not_features():
    """They judge and print; the machine pipelines run both, and neither gives arcs."""
    _, pipelines = units_under_test(argparse.Namespace(passes=None, python_passes=None,
                                                       pass_commands=None))
    config = CampaignConfig(seed=1, pipelines=pipelines)
    sampler = CoverageSampler(1)
    arcs: set[str] = set()
    with sampler.measuring(arcs):
        for index in range(3):
            fn, inputs = build_case(1, index, config)
            Harness(inputs, **config.harness_options()).check(fn, pipelines)
    if sampler.unavailable:  # run under another tracer (a debugger, pytest-cov)
        return
    assert any(a.startswith("arc:agxir/machine/") for a in arcs)
    assert not any(a.startswith(("arc:agxir/machine/text.py", "arc:agxir/machine/verifier.py"))
                   for a in arcs)


def test_listening_for_near_misses_never_changes_what_a_pass_does():
    """Every registered pass, with and without a listener, on generated programs (passes
    that build their rules per run included: a pattern's cached header is its own)."""
    from agxir.ir import clone_function
    from agxir.passes import PASSES
    from agxir.text import print_function

    config = CampaignConfig(seed=4, pipelines=[])
    heard = 0
    for index in range(10):
        fn, _ = build_case(4, index, config)
        for name in PASSES:
            unit = registered(name)
            quiet, loud = clone_function(fn), clone_function(fn)
            unit.run(quiet)
            with recording_near_misses() as misses:
                unit.run(loud)
            heard += len(misses)
            assert print_function(loud) == print_function(quiet), (index, name)
    assert heard > 0
