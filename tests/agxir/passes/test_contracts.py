"""The one registry of passes (agxir.passes.registry): every pass has a complete contract,
and the views the rest of the project looks passes up in are what they were before the
registry (the literals below are those views as they stood, written down first)."""

from __future__ import annotations

import dataclasses

import pytest

from agxir.machine import pipeline
from agxir.passes import PASSES, RULE_TABLES, registry
from agxir.passes.contract import (
    LEVELS,
    LOWERS_PRESSURE,
    PROMISES,
    PROMOTES_ADDRESS_MATH,
    Contract,
    placed,
    variant,
)
from agxir.passes.pass_ import Pass

SSA_NAMES = [
    "dce", "copyprop", "cmpsel", "cmpsel-uniform-compare", "cmpsel-uniform-select", "branch-cmp",
    "address-cleanup", "address-fuse", "address-fold", "address-lower", "fmov-prop", "fmov-rev",
    "inline-imm", "not-fuse", "not-rev", "if-not", "ext-prop", "shift-fuse", "ballot-fuse",
    "pressure-schedule",
]
MACHINE_NAMES = [
    "lower-cf", "ra", "lower-phis", "lower-copies", "out-of-ssa", "vreg-ra", "fuse-exec-cmp",
    "reuse-conversion", "ra-demand", "ra-occupancy",
]
# What fuzz.passes_under_test.machine_prefix returned by searching the pipelines.
PREFIXES = {
    "lower-cf": ("lower-cf",),
    "ra": ("lower-cf", "ra"),
    "lower-phis": ("lower-cf", "ra", "lower-phis"),
    "lower-copies": ("lower-cf", "ra", "lower-phis", "lower-copies"),
    "out-of-ssa": ("lower-cf", "out-of-ssa"),
    "vreg-ra": ("lower-cf", "out-of-ssa", "vreg-ra"),
    "fuse-exec-cmp": ("lower-cf", "ra", "lower-phis", "lower-copies", "fuse-exec-cmp"),
    "reuse-conversion": ("lower-cf", "out-of-ssa", "reuse-conversion"),
    "ra-demand": ("lower-cf", "ra-demand"),
    "ra-occupancy": ("lower-cf", "ra-occupancy"),
}
# fuzz.commands.units.TAKES_LEVEL as it was written by hand.
TAKES_LEVEL = {
    "lower-cf": "ssa", "ra": "exec", "out-of-ssa": "exec", "vreg-ra": "vreg",
    "reuse-conversion": "vreg", "lower-phis": "machine", "lower-copies": "machine",
    "fuse-exec-cmp": "machine", "ra-demand": "exec", "ra-occupancy": "exec",
}


def test_every_registered_pass_has_a_complete_contract():
    assert list(registry.CONTRACTS) == SSA_NAMES + MACHINE_NAMES
    for name, c in registry.CONTRACTS.items():
        assert isinstance(c, Contract) and c.name == name
        assert c.summary and callable(c.run)
        assert c.takes in LEVELS and c.gives in LEVELS
        assert c.rules is None or (c.rules and all(r.name for r in c.rules))
        assert c.promises <= PROMISES
        assert c.prefix and c.prefix[-1] == name and c.of is None
        assert all(step in registry.CONTRACTS for step in (*c.prefix, *c.after))
        # the steps before it bring an SSA program to the level it takes
        level = "ssa"
        for step in c.prefix[:-1]:
            assert registry.CONTRACTS[step].takes == level
            level = registry.CONTRACTS[step].gives
        assert level == c.takes


def test_the_views_are_what_they_were():
    assert list(PASSES) == SSA_NAMES
    assert all(isinstance(p, Pass) for p in PASSES.values())
    assert list(pipeline.MACHINE_PASSES) == MACHINE_NAMES
    assert list(RULE_TABLES) == [n for n in SSA_NAMES if n not in ("dce", "pressure-schedule")]
    from agxir.passes import cmpsel, copyprop

    assert RULE_TABLES["copyprop"] is copyprop.RULES
    assert RULE_TABLES["cmpsel-uniform-select"] is cmpsel.UNIFORM_SELECT_RULES
    assert {n: c.prefix for n, c in registry.CONTRACTS.items() if n in MACHINE_NAMES} == PREFIXES
    assert all(registry.CONTRACTS[n].prefix == (n,) for n in SSA_NAMES)
    assert {n: registry.CONTRACTS[n].takes for n in MACHINE_NAMES} == TAKES_LEVEL
    assert registry.promising(PROMOTES_ADDRESS_MATH) == {
        "address-cleanup", "address-fuse", "address-fold", "address-lower"}
    assert registry.promising(LOWERS_PRESSURE) == {"pressure-schedule"}
    assert pipeline.MACHINE_PIPELINES == (
        ("lower-cf", "ra", "lower-phis", "lower-copies"),
        ("lower-cf", "out-of-ssa", "vreg-ra", "lower-copies"),
        ("lower-cf", "ra", "lower-phis", "lower-copies", "fuse-exec-cmp"),
        ("lower-cf", "out-of-ssa", "reuse-conversion", "vreg-ra", "lower-copies"),
        ("lower-cf", "ra-demand", "lower-phis", "lower-copies"),
        ("lower-cf", "ra-occupancy", "lower-phis", "lower-copies"),
    )


def test_a_pass_after_which_its_pipeline_goes_on_knows_the_rest():
    assert registry.CONTRACTS["reuse-conversion"].after == ("vreg-ra", "lower-copies")
    assert registry.CONTRACTS["lower-cf"].after == ("ra", "lower-phis", "lower-copies")
    assert registry.CONTRACTS["fuse-exec-cmp"].after == ()


def test_a_variant_inherits_the_contract_of_the_pass_it_wraps():
    of = registry.CONTRACTS["pressure-schedule"]
    wrong = variant(of, "pressure-schedule-wrong", "a wrong one", lambda fn: False)
    assert wrong.of == "pressure-schedule" and wrong.promises == of.promises
    assert (wrong.takes, wrong.gives, wrong.prefix) == ("ssa", "ssa", ("pressure-schedule-wrong",))
    ra = variant(registry.CONTRACTS["ra"], "zoo-ra", "a wrong ra", lambda fn: False)
    assert ra.prefix == ("lower-cf", "zoo-ra") and ra.after == ("lower-phis", "lower-copies")
    assert variant(registry.CONTRACTS["cmpsel"], "x", "y", lambda fn: False).rules is None


def test_a_contract_refuses_what_it_cannot_mean():
    run = registry.CONTRACTS["dce"].run
    with pytest.raises(ValueError, match="levels"):
        Contract("p", "s", run, "ssa", "register")
    with pytest.raises(ValueError, match="promises"):
        Contract("p", "s", run, "ssa", "ssa", promises=frozenset({"is-fast"}))
    with pytest.raises(ValueError, match="prefix"):
        Contract("p", "s", run, "ssa", "ssa", prefix=("q",))
    alone = placed(Contract("p", "s", run, "ssa", "ssa"), registry.MACHINE_PIPELINES)
    assert dataclasses.astuple(alone)[-3:] == (("p",), (), None)
