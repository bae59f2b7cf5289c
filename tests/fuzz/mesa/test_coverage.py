"""`agxfuzz mesa coverage`: gcov over Mesa's pass files under a campaign on the gcov bridge.

A small fixed budget reaches agx_optimizer.c and agx_register_allocate.c; code no
translatable program can reach (the optimizer's image-write rule: the opcode table
translates no image op) is listed uncovered; a crashing request's counters are still
written; the region logic on made-up counts."""

from __future__ import annotations

import pytest

from fuzz.mesa.coverage import FileCoverage, measure, read_counters
from tests.fuzz.mesa.test_client import MISMATCHED_PHI


@pytest.fixture(scope="session")
def gcov_bridge():
    """The gcov bridge, built (or found in the user's cache) once per session."""
    from fuzz.mesa.build import build_bridge

    return build_bridge(coverage=True)


@pytest.fixture(scope="module")
def small_campaign(gcov_bridge, tmp_path_factory):
    run = tmp_path_factory.mktemp("coverage-run")
    return measure(examples=6, seed=1, jobs=1, bridge=gcov_bridge, keep=run), run


def test_a_small_budget_covers_the_optimizer_and_the_allocator(small_campaign):
    coverage, run = small_campaign
    optimizer = coverage.files["agx_optimizer"]
    ra = coverage.files["agx_register_allocate"]
    assert optimizer.lines_hit > 0 and ra.lines_hit > 0
    assert optimizer.branches_hit > 0 and ra.branches_hit > 0
    assert ra.functions["agx_ra"] > 0
    assert ra.lines_hit < len(ra.lines)  # not everything: the report has regions to list
    assert list(run.glob("*agx_register_allocate.gcda"))  # the counters went where told


def test_code_no_translatable_program_reaches_is_listed_uncovered(small_campaign):
    coverage, _ = small_campaign
    region = coverage.region_of("image_write_source_can_be_immediate")
    assert region is not None and region.whole_function and region.file == "agx_optimizer"
    assert coverage.files["agx_optimizer"].functions["image_write_source_can_be_immediate"] == 0
    report = coverage.format(top=1000)
    assert "image_write_source_can_be_immediate (never entered)" in report
    assert "agx_optimizer.c" in report.splitlines()[1]


def test_a_crashing_request_still_writes_its_counters(gcov_bridge, tmp_path, monkeypatch):
    from fuzz.mesa.client import BridgeClient

    strip = (gcov_bridge.path.parent / "gcno" / "strip").read_text().strip()
    monkeypatch.setenv("GCOV_PREFIX", str(tmp_path))
    monkeypatch.setenv("GCOV_PREFIX_STRIP", strip)
    with BridgeClient(gcov_bridge.path, timeout=20.0) as client:
        crashed = client.request(["ra"], MISMATCHED_PHI)
    assert crashed.status == "crash" and crashed.detail == "signal 6"  # still Mesa's abort
    files = read_counters(tmp_path, gcov_bridge.path.parent / "gcno")
    assert files["agx_register_allocate"].functions["agx_ra"] == 1  # the one request


def _made_up() -> FileCoverage:
    f = FileCoverage("agx_x")
    for line, count, function in [(10, 3, "f"), (11, 0, "f"), (13, 0, "f"), (14, 2, "f"),
                                  (15, 0, "f"), (20, 0, "g"), (21, 0, "g"), (22, 0, "g")]:
        f.lines[line] = count
        f.function_of[line] = function
    f.functions = {"f": 3, "g": 0}
    f.branches = {(10, 0): 1, (10, 1): 0}
    return f


def test_regions_are_unexecuted_runs_within_one_function_largest_first():
    regions = _made_up().regions()
    spans = [(r.start, r.end, r.function, r.lines, r.whole_function) for r in regions]
    # 11 and 13 are one run (12 is not counted); 15 and 20 are not (another function)
    assert spans == [(20, 22, "g", 3, True), (11, 13, "f", 2, False), (15, 15, "f", 1, False)]
    assert str(regions[0]) == "agx_x.c:20-22 g (never entered): 3 lines"
    f = _made_up()
    assert (f.lines_hit, len(f.lines), f.branches_hit, len(f.branches)) == (2, 8, 1, 2)


def test_a_pressure_block_makes_agx_ra_split_live_ranges(gcov_bridge, tmp_path, monkeypatch):
    """What the coverage report led to: the profile's pressure block reaches agx_ra's
    eviction code, which no program of the profile reached without it."""
    from agxir.machine.lower_cf import structurable
    from fuzz.generate import ChoiceSource
    from fuzz.mesa.client import BridgeClient, run_passes
    from fuzz.mesa.translatable import add_pressure, blockers, translatable_program
    from fuzz.passes_under_test import registered

    strip = (gcov_bridge.path.parent / "gcno" / "strip").read_text().strip()
    monkeypatch.setenv("GCOV_PREFIX", str(tmp_path))
    monkeypatch.setenv("GCOV_PREFIX_STRIP", strip)
    ran = 0
    with BridgeClient(gcov_bridge.path, timeout=20.0) as client:
        for seed in range(12):
            fn = translatable_program(ChoiceSource.from_seed(seed))
            if structurable(fn) is not None:
                continue
            add_pressure(fn, ChoiceSource.from_seed(100 + seed))
            assert not blockers(fn)
            registered("lower-cf").run(fn)
            out = run_passes(client, fn, ["dce", "ra"])
            assert out.result.status == "ok", out.result.message
            ran += 1
    assert ran >= 6
    ra = read_counters(tmp_path, gcov_bridge.path.parent / "gcno")["agx_register_allocate"]
    assert ra.functions["find_best_region_to_evict"] > 0
    assert ra.functions["assign_regs_by_copying"] > 0


def test_pressure_is_one_program_in_k_from_the_environment(monkeypatch):
    from fuzz.mesa.translatable import pressure_every

    monkeypatch.setenv("AGXFUZZ_MESA_PRESSURE", "4")
    assert pressure_every() == 4
    monkeypatch.setenv("AGXFUZZ_MESA_PRESSURE", "x")
    assert pressure_every() == 0
    monkeypatch.delenv("AGXFUZZ_MESA_PRESSURE")
    assert pressure_every() == 0
