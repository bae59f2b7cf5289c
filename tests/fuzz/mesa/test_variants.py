"""Wrong variants planted in Mesa's C (fuzz/mesa/variants): every patch applies to the tree,
one built variant is caught within a fixed program budget on the Mesa pipelines (and the
clean tree is not, on the same programs), and a patch that does not apply is refused by
name, one line, never skipped."""

from __future__ import annotations

from pathlib import Path

from fuzz.cli import main
from fuzz.mesa import variants
from fuzz.mesa.build import build_bridge
from fuzz.mesa.zoo import mesa_variants


def _hunt(variant, programs: int, tmp_path):
    """The zoo's campaign for `variant` (fuzz/zoo/runner.py's settings) on a fixed budget of
    programs, one job: (the first finding or None, the programs it took)."""
    from fuzz.campaign import CampaignConfig, run_campaign
    from fuzz.findings import FindingStore
    from fuzz.passes_under_test import replay_arguments

    config = CampaignConfig(seed=1, pipelines=variant.mesa.pipelines(), examples=programs,
                            jobs=1, fail_fast=True, mesa_translatable=True)
    with variant.mesa.bridge():
        result = run_campaign(config, FindingStore(tmp_path, lambda f: replay_arguments([])))
    if not result.findings:
        return None, None
    return result.findings[0][0], result.first_finding_program


def test_every_patch_applies_and_says_what_it_mirrors(bridge):
    names = variants.names()
    assert len(names) >= 8
    for name in names:
        patch = variants.load(name)
        assert patch.bug_class() and patch.mirrors(), name
        texts = variants.apply(patch, lambda path: (bridge.mesa_src / path).read_text())
        for path, text in texts.items():
            assert text != (bridge.mesa_src / path).read_text(), name


def test_a_planted_variant_is_caught_in_a_fixed_budget(bridge, session_cache, monkeypatch,
                                                       tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache.parent.parent))  # builds cached
    [variant], refused = mesa_variants(["liveness-phi-dests-live-in"], bridge.mesa_src)
    assert refused == []
    assert variant.mesa.binary != str(bridge.path)
    finding, programs = _hunt(variant, 20, tmp_path)
    assert finding is not None and programs <= 20
    assert finding.pass_name == "mesa:liveness"
    assert finding.message.startswith("MesaLivenessDiffers: Mesa's live_")
    # the clean bridge on the reproducer: no such finding
    from fuzz.mesa.zoo import clean_fails_alike

    assert clean_fails_alike(finding, str(bridge.path)) is None


def test_the_gate_passes_nothing_when_the_variant_is_the_clean_bridge(bridge, tmp_path):
    from fuzz.mesa.zoo import MesaBuild
    from fuzz.zoo.runner import Variant

    same = Variant("clean", "", "", mesa=MesaBuild(None, str(bridge.path), str(bridge.path)))
    assert _hunt(same, 10, tmp_path) == (None, None)


def test_a_patch_that_does_not_apply_is_reported_by_name(bridge, tmp_path, monkeypatch,
                                                         capsys):
    from tests.fuzz.mesa.test_build import _tree_copy

    tree = _tree_copy(bridge.mesa_src, tmp_path)
    schedule = tree / "src/asahi/compiler/agx_pressure_schedule.c"
    schedule.write_text(schedule.read_text().replace("dep == AGX_SCHEDULE_CLASS_LOAD ||",
                                                     "dep == AGX_SCHEDULE_CLASS_LOAD  ||"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    patch = variants.load("schedule-ignores-memory-order")
    try:
        build_bridge(tree, patches=[patch])
    except variants.PatchDoesNotApply as error:
        assert error.name == "schedule-ignores-memory-order"
        assert str(error) == ("agxfuzz: patch schedule-ignores-memory-order does not apply: "
                              "hunk 1 of src/asahi/compiler/agx_pressure_schedule.c (line 89) "
                              "matches nowhere")
    else:
        raise AssertionError("a patch that does not apply was applied")
    assert not list(Path(tmp_path / "cache").rglob("agxfuzz-mesa-bridge"))
    # zoo --mesa: refused by name on stderr, counted as not caught, the others still run
    code = main(["zoo", "--mesa", str(tree), "--only", "schedule-ignores-memory-order",
                 "--time-per-bug", "1", "--jobs", "1", "--out", str(tmp_path / "z")])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("agxfuzz: patch schedule-ignores-memory-order does not apply: ")
    assert err[-1] == "agxfuzz: not caught: schedule-ignores-memory-order"
