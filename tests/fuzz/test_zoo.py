"""The bug zoo: every variant is a real bug the suite catches, replayable by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.zoo.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 600  # seconds: only a broken run gets near it; every budget here is programs


def test_there_are_at_least_twelve_documented_variants():
    assert len(VARIANTS) >= 12
    assert len({v.name for v in VARIANTS}) == len(VARIANTS)
    for variant in VARIANTS:
        assert variant.origin and variant.description
        assert (variant.make_pass is None) != (variant.liveness is None)


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.make_pass], ids=lambda v: v.name)
def test_pass_variants_replay_by_their_flag(variant):
    import importlib

    unit = variant.make_pass()
    flag, spec = unit.flag
    assert flag == "--pass"
    module, attribute = spec.split(":")
    assert getattr(importlib.import_module(module), attribute) is unit.run


def test_the_zoo_catches_these_variants(tmp_path):
    """A budget of programs, one job: the same catches on any machine under any load (seed 1
    catches each within 10 programs; 200 leave room for a generator change)."""
    names = "cmpsel-blog-swap,branch-cmp-no-xor,dce-removes-stores,liveness-phi-dests-live-in"
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "zoo", "--only", names, "--programs-per-bug", "200",
         "--seed", "1", "--jobs", "1", "--out", str(tmp_path / "zoo"),
         "--json", str(tmp_path / "zoo.json"), "--junit", str(tmp_path / "zoo.xml")],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to 200 programs each" in result.stdout
    report = json.loads((tmp_path / "zoo.json").read_text())
    assert [v["caught"] for v in report["variants"]] == [True] * 4
    assert all(0 < v["programs"] <= 200 for v in report["variants"])
    assert report["summary"]["reduced_max"] <= 8
    for entry in report["variants"]:
        assert Path(entry["file"]).exists()


def test_unknown_variant_is_bad_usage():
    result = subprocess.run([sys.executable, "-m", "fuzz", "zoo", "--only", "nope"], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD)
    assert result.returncode == 2 and "unknown variant" in result.stderr


def test_a_time_and_a_program_budget_together_are_bad_usage():
    result = subprocess.run([sys.executable, "-m", "fuzz", "zoo", "--time-per-bug", "5",
                             "--programs-per-bug", "5"], cwd=ROOT, capture_output=True,
                            text=True, timeout=HANG_GUARD)
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_at_default_cost_a_variant_is_caught_beside_the_default_pipelines(tmp_path):
    from fuzz.commands.zoo import default_pipelines
    from fuzz.passes_under_test import python_pass, registered
    from fuzz.zoo.runner import Variant, run_variant

    beside = default_pipelines()
    assert len(beside) >= 20  # every registered pass alone, two SSA and four machine pipelines
    variant = {v.name: v for v in VARIANTS}["cmpsel-blog-swap"]
    outcome = run_variant(variant, programs=200, seed=1, jobs=1, out=tmp_path, beside=beside)
    assert outcome.caught and outcome.finding.pass_name == "blog-cmpsel"
    # A failing pipeline beside it is a real bug, never counted as the variant's catch.
    right = Variant("right-dce", "test", "the right dce", lambda: registered("dce"))
    wrong = python_pass("examples/wrong_cmpsel.py:wrong_cmpsel")
    outcome = run_variant(right, programs=200, seed=1, jobs=1, out=tmp_path / "b",
                          beside=[[wrong]])
    assert not outcome.caught and outcome.finding.pass_name == "wrong_cmpsel:wrong_cmpsel"
    assert outcome.message.startswith("a right pipeline failed first: wrong_cmpsel")


def test_a_variant_runs_under_exactly_one_budget(tmp_path):
    from fuzz.zoo.runner import run_variant

    variant = VARIANTS[0]
    for budget in ({}, {"seconds": 5.0, "programs": 5}):
        with pytest.raises(ValueError, match="either seconds or programs"):
            run_variant(variant, seed=1, jobs=1, out=tmp_path, **budget)
