"""The wave interpreter on the lane VM against the same interpreter on numpy, the reference:
on the exec, vreg and machine programs the campaign's default pipelines make of generated
programs, and on what wrong passes make of them (stale reads of lanes that were inactive
must show the same garbage), every outcome field must agree, and under "auto" every
function must take the VM. The VM's programs come from the extension's compiler and from
tests' reference compiler (tests/oracles/interp/reference_compile.py)."""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import pytest

from agxir.ir import SSA, clone_function
from agxir.text import print_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import random_input_sets
from oracles.machine import CompiledWave
from tests.oracles.interp.reference_compile import compiled_by
from tests.oracles.interp.test_vm import golden_programs
from tests.oracles.machine.pipeline_programs import default_pipelines, pipeline_steps
from tests.oracles.machine.test_wave_forwarding import CASES, ROUTES

PROGRAMS_WANTED = 150  # per level
MOST_GENERATED = 400
FUELS = (3000, 60)  # the second runs most wave loops out of fuel
LEVELS = ("exec", "vreg", "machine")


@pytest.fixture(params=["lanevm", "reference"])
def compiler(request, monkeypatch):
    """Which compiler makes the VM's programs: the extension's, or tests' reference."""
    with compiled_by(request.param, monkeypatch):
        yield request.param


@cache
def wave_programs() -> dict[str, tuple]:
    """Level -> (fn, input sets) of the programs below SSA the default pipelines make of
    generated programs, distinct by text, up to PROGRAMS_WANTED of each level."""
    pipelines = default_pipelines()
    config = CampaignConfig(seed=17, pipelines=pipelines)
    found: dict[str, dict] = defaultdict(dict)
    for index in range(MOST_GENERATED):
        if all(len(found[level]) >= PROGRAMS_WANTED for level in LEVELS):
            break
        fn, inputs = build_case(17, index, config)
        for _step, _before, work in pipeline_steps(fn, pipelines):
            if work.level != SSA:
                found[str(work.level)].setdefault(print_function(work), (work, inputs[:3]))
    return {level: tuple(found[level].values())[:PROGRAMS_WANTED] for level in LEVELS}


def _agree(fn, inputs, fuel, forward=True) -> list:
    reference = CompiledWave(fn, forward, backend="numpy")
    expected = reference.run(inputs, fuel)
    compiled = CompiledWave(fn, forward, backend="vm")
    outcomes = compiled.run(inputs, fuel)
    assert compiled.backend == "vm" and reference.backend == "numpy"
    assert outcomes == expected, print_function(fn)
    assert compiled.lane_instructions == reference.lane_instructions
    assert compiled.set_steps == reference.set_steps
    return outcomes


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("fuel", FUELS)
def test_vm_and_numpy_give_the_same_outcomes(level, fuel, compiler):
    programs = wave_programs()[level]
    assert len(programs) == PROGRAMS_WANTED
    kinds = set()
    for fn, inputs in programs:
        kinds |= {o.kind for o in _agree(fn, inputs, fuel)}
    assert "returned" in kinds
    if fuel == FUELS[1]:
        assert "out_of_fuel" in kinds


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("forward", [True, False])
def test_vm_and_numpy_agree_on_wrong_passes(route, forward, compiler):
    for fn, inputs in CASES:
        lowered = clone_function(fn)
        for step in ROUTES[route]:
            step(lowered)
            _agree(lowered, inputs, 3000, forward)


def test_vm_and_numpy_agree_on_the_goldens(compiler):
    goldens = golden_programs("wave")
    assert goldens
    for fn in goldens:
        for seed in (1, 2):
            _agree(fn, random_input_sets(fn, 32, seed=seed, count=4), 3000)


def test_every_campaign_function_takes_the_vm():
    for level in LEVELS:
        programs = wave_programs()[level]
        backends = [CompiledWave(fn, backend="auto").backend for fn, _ in programs]
        assert backends.count("vm") == len(backends) == PROGRAMS_WANTED, level
