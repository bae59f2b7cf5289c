"""Issue 19: programs declined as not allocatable and steps judged inconclusive are counted
in `run`'s summary and its JSON report, beside the unstructurable ones."""

from __future__ import annotations

from fuzz.campaign import CampaignResult
from fuzz.ci_reports import json_report
from fuzz.commands.run import _print_summary
from fuzz.harness import Stats


def _result() -> CampaignResult:
    stats = Stats(programs=10, unstructurable=3, unallocatable=2, inconclusive=1)
    return CampaignResult(stats, 1.0)


def test_the_summary_says_how_many_were_not_allocatable_and_inconclusive(capsys):
    _print_summary(_result(), [], 7)
    out = capsys.readouterr().out
    assert "machine pipeline: 3 programs not structurable, not lowered" in out
    assert "machine pipeline: 2 programs not allocatable (over the register bound)" in out
    assert "refinement inconclusive: 1 steps" in out


def test_the_json_report_carries_the_counts():
    report = json_report(_result(), 7, [])
    assert (report["not_structurable"], report["not_allocatable"],
            report["inconclusive_steps"]) == (3, 2, 1)


def test_stats_merge_adds_the_counts():
    total = Stats(unallocatable=1, inconclusive=2)
    total.merge(Stats(unallocatable=3, inconclusive=4))
    assert (total.unallocatable, total.inconclusive) == (4, 6)
