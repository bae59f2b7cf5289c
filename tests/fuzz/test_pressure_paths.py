"""The campaign's side of the pressure paths: each program runs one of the tight-bound
pipelines (`fuzz.campaign.alternatives`, drawn from the seed), the harness counts the paths
of programs that reach the machine level, and the summary and JSON report carry them."""

from collections import Counter
from types import SimpleNamespace

from agxir.machine.paths import PATHS
from agxir.machine.pipeline import ALTERNATIVES, DEMAND_PIPELINE, MACHINE_PIPELINE
from agxir.text import parse_function
from fuzz.campaign import CampaignConfig, CampaignResult, alternatives
from fuzz.ci_reports import json_report
from fuzz.commands.run import _print_pressure_paths
from fuzz.generate.cases import build_case
from fuzz.harness import Harness, Stats
from fuzz.passes_under_test import registered
from oracles.inputs import InputSet
from tests.agxir.machine.test_regalloc import SPLIT_IN_IF


def _pipeline(names):
    return [registered(name) for name in names]


def _names(pipelines):
    return [tuple(unit.name for unit in pipeline) for pipeline in pipelines]


def test_each_program_runs_one_tight_pipeline_drawn_from_its_seed():
    group = [pipeline for pipeline, _ in ALTERNATIVES]
    pipelines = [_pipeline(MACHINE_PIPELINE), *(_pipeline(p) for p in group)]
    chosen = Counter()
    for index in range(400):
        names = _names(alternatives(pipelines, 7, index))
        assert names[0] == MACHINE_PIPELINE and len(names) == 2  # the rest, and one of them
        assert names == _names(alternatives(pipelines, 7, index))  # replays
        chosen[names[1]] += 1
    weights = dict(ALTERNATIVES)
    total = sum(weights.values())
    for pipeline in group:  # each about its weight's share (400 draws)
        assert abs(chosen[pipeline] / 400 - weights[pipeline] / total) < 0.06, chosen
    assert any(_names(alternatives(pipelines, 8, i)) != _names(alternatives(pipelines, 7, i))
               for i in range(50))  # another seed, other draws


def test_a_campaign_naming_one_tight_pipeline_runs_it_on_every_program():
    pipelines = [_pipeline(DEMAND_PIPELINE)]
    assert all(_names(alternatives(pipelines, 1, i)) == [DEMAND_PIPELINE] for i in range(50))


def _evicting_program():
    """The first program of seed 1 whose tight allocation evicts."""
    config = CampaignConfig(seed=1, pipelines=[])
    for index in range(200):
        fn, inputs = build_case(1, index, config)
        harness = Harness(inputs)
        harness.check(fn, [_pipeline(DEMAND_PIPELINE)])
        if harness.stats.pressure_paths["eviction"]:
            return fn, inputs
    raise AssertionError("no generated program evicts at the tight bound in 200")


def test_the_harness_counts_paths_per_machine_level_program_once():
    fn, inputs = _evicting_program()
    harness = Harness(inputs)
    # The same tight route twice: a program's paths count once, whatever its pipelines.
    assert harness.check(fn, [_pipeline(DEMAND_PIPELINE), _pipeline(DEMAND_PIPELINE)]) == []
    assert harness.stats.machine_programs == 1
    assert harness.stats.pressure_paths["eviction"] == 1
    assert "path:ra-demand/eviction" in harness.features
    split = harness.stats.pressure_paths["edge-split"]
    assert ("path:lower-cf/edge-split" in harness.features) == bool(split) and split <= 1
    # An SSA-only pipeline reaches no machine level: nothing is counted.
    ssa_only = Harness(inputs)
    ssa_only.check(fn, [_pipeline(("dce",))])
    assert ssa_only.stats.machine_programs == 0 and not ssa_only.stats.pressure_paths


def test_an_exec_level_program_counts_nothing_until_allocated():
    harness = Harness([InputSet(4)])
    harness.check(parse_function(SPLIT_IN_IF), [])
    assert harness.stats.machine_programs == 0


def test_stats_merge_and_the_reports_carry_the_paths(capsys):
    stats, other = Stats(), Stats()
    stats.machine_programs, other.machine_programs = 30, 10
    stats.pressure_paths.update({"eviction": 3, "swap": 1})
    other.pressure_paths.update({"eviction": 1, "eviction-repack": 1})
    stats.merge(other)
    assert stats.machine_programs == 40 and stats.pressure_paths["eviction"] == 4
    _print_pressure_paths(stats)
    printed = " ".join(capsys.readouterr().out.split())
    assert printed.startswith("pressure paths the model's machine passes took (of 40 machine-level "
                              "programs): ")
    assert "evictions 4 (10.0%)" in printed and "swaps 1 (2.5%)" in printed
    assert "cycle breaks 0 (0.0%)" in printed  # every path, reached or not
    result = CampaignResult(stats, 1.0)
    report = json_report(result, 1, [])["pressure_paths"]
    assert report["machine_programs"] == 40
    assert list(report["reached"]) == list(PATHS) and report["reached"]["eviction"] == 4
    assert report["other"] == {"eviction-repack": 1}


def test_no_machine_level_program_prints_no_line(capsys):
    _print_pressure_paths(SimpleNamespace(machine_programs=0, pressure_paths=Counter()))
    assert capsys.readouterr().out == ""
