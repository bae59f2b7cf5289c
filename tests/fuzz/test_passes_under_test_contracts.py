"""The one lookup of a pass by name (fuzz.passes_under_test.contract_of): the model's
registry and Mesa's passes composed; `machine_prefix`, `registered` and the level a step
takes (fuzz.commands.units) all read it, and give what they gave when they searched."""

from __future__ import annotations

import pytest

from agxir.ir import EXEC, MACHINE, Function
from agxir.passes import UnknownPass
from agxir.passes.contract import LEVELS, WHOLE_BACKEND, Contract
from agxir.passes.registry import CONTRACTS
from fuzz.commands.units import from_level
from fuzz.mesa.passes import MESA_CONTRACTS, MESA_PASSES, mesa_pass, mesa_prefix
from fuzz.passes_under_test import contract_of, machine_prefix, registered
from fuzz.step_oracles import Step

# What mesa_prefix returned when it was written out by hand.
MESA_PREFIXES = {
    **{f"mesa:{n}": ["lower-cf", f"mesa:{n}"]
       for n in ("optimizer", "cse", "dce", "schedule", "liveness", "backend")},
    "mesa:ra": ["lower-cf", "mesa:dce", "mesa:ra"],
    "mesa:lower-copies": ["lower-cf", "mesa:dce", "mesa:ra", "mesa:lower-copies"],
    "mesa:lower-pseudo": ["lower-cf", "mesa:dce", "mesa:ra", "mesa:lower-copies",
                          "mesa:lower-pseudo"],
}


def test_every_pass_is_found_with_a_complete_contract():
    assert list(MESA_CONTRACTS) == [f"mesa:{n}" for n in MESA_PASSES]
    for name in [*CONTRACTS, *MESA_CONTRACTS]:
        contract = contract_of(name)
        assert isinstance(contract, Contract) and contract.name == name
        assert contract.summary and callable(contract.run) and contract.of is None
        assert contract.takes in LEVELS and contract.gives in LEVELS
        level = "ssa"  # the steps before it bring an SSA program to the level it takes
        for step in contract.prefix[:-1]:
            assert contract_of(step).takes == level
            level = contract_of(step).gives
        assert level == contract.takes
    assert contract_of("mod:callable") is None and contract_of("mesa:nope") is None


def test_prefixes_are_what_searching_the_pipelines_gave():
    assert {name: mesa_prefix(name) for name in MESA_CONTRACTS} == MESA_PREFIXES
    assert {name: machine_prefix(name) for name in MESA_CONTRACTS} == MESA_PREFIXES
    assert machine_prefix("fuse-exec-cmp") == ["lower-cf", "ra", "lower-phis", "lower-copies",
                                               "fuse-exec-cmp"]
    assert machine_prefix("copyprop") == ["copyprop"]
    assert machine_prefix("mod:callable") == ["mod:callable"]
    assert mesa_prefix("mesa:nope") == ["lower-cf", "mesa:nope"]


def _allocation_step(name: str, contract: Contract | None) -> Step:
    before, after = Function("f", [], [], EXEC), Function("f", [], [], MACHINE)
    return Step(name, before, "", after, "", before, "", contract)


def test_a_whole_backend_is_known_to_the_step_oracles_by_its_contract_not_its_name():
    """An exec -> machine step allocates (the RA and demand checkers judge it) unless its
    pass's contract says it is a whole backend: the unit `registered` gives carries it."""
    backends = {n for n, c in MESA_CONTRACTS.items() if WHOLE_BACKEND in c.promises}
    assert backends == {"mesa:backend"}
    assert not any(WHOLE_BACKEND in c.promises for c in CONTRACTS.values())
    for name, contract in MESA_CONTRACTS.items():
        unit = mesa_pass(name)
        assert unit.contract is contract and unit.run is contract.run  # one run, not two
        assert _allocation_step(name, contract).allocates == (name not in backends)
    assert registered("ra").contract is CONTRACTS["ra"]
    assert _allocation_step("ra", CONTRACTS["ra"]).allocates
    # the same name with another contract is judged by that contract, not by its name
    assert _allocation_step("mesa:backend", CONTRACTS["ra"]).allocates
    assert not _allocation_step("ra", MESA_CONTRACTS["mesa:backend"]).allocates


def test_registered_units_and_unknown_names():
    unit = registered("ra")
    assert (unit.name, unit.run, unit.flag) == ("ra", CONTRACTS["ra"].run, ("--passes", "ra"))
    with pytest.raises(UnknownPass) as raised:
        registered("nope")
    assert str(raised.value) == (f"unknown pass 'nope'; known passes: {', '.join(CONTRACTS)}, "
                                 "mesa:NAME")


def test_the_level_a_step_takes_comes_from_its_contract():
    assert from_level(["lower-cf", "ra", "lower-phis", "lower-copies"], "exec") == [
        "ra", "lower-phis", "lower-copies"]
    assert from_level(["lower-cf", "mesa:dce", "mesa:ra"], "exec") == ["mesa:dce", "mesa:ra"]
    assert from_level(["lower-cf", "out-of-ssa", "vreg-ra"], "machine") == []
    assert from_level(["mod:callable", "dce"], "ssa") == ["mod:callable", "dce"]
