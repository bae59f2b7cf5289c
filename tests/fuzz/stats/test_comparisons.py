"""The comparison table: each row's two pipelines differ in exactly one pass, run through a
register allocator, and the rows the issue asks for are there."""

import pytest

from agxir.machine.pipeline import MACHINE_PIPELINE, VREG_PIPELINE
from fuzz.stats.comparisons import COMPARISONS, UnknownComparison, select


def _one_pass_apart(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """`new` is `old` with one pass added, or with one pass replaced by another."""
    if len(new) == len(old) + 1:
        return any(new[:i] + new[i + 1:] == old for i in range(len(new)))
    if len(new) == len(old):
        return sum(a != b for a, b in zip(old, new)) == 1
    return False


@pytest.mark.parametrize("comparison", COMPARISONS, ids=lambda c: c.name)
def test_each_row_differs_in_one_pass_and_reaches_registers(comparison):
    old, new = comparison.before.names, comparison.after.names
    assert _one_pass_apart(old, new) or _one_pass_apart(new, old)
    assert comparison.why
    for names in (old, new):
        route = MACHINE_PIPELINE if "ra" in names else VREG_PIPELINE
        assert [n for n in names if n in route] == list(route)  # the whole route, in order


def test_the_rows_the_issue_asks_for():
    rows = {c.name: c for c in COMPARISONS}
    assert rows["h4-vs-h1"].difference() == "-cmpsel-uniform-compare +cmpsel"
    assert rows["h4-vs-h3"].difference() == "-cmpsel-uniform-select +cmpsel"
    assert rows["h3-vs-h1"].difference() == "-cmpsel-uniform-compare +cmpsel-uniform-select"
    for heuristic in ("h1", "h3", "h4"):
        assert rows[f"schedule-{heuristic}"].difference() == "+pressure-schedule"
    assert rows["reuse-conversion"].difference() == "+reuse-conversion"
    assert "vreg-ra" in rows["reuse-conversion"].after.names
    assert rows["fuse-exec-cmp"].after.names[-1] == "fuse-exec-cmp"
    assert len(rows) == len(COMPARISONS)  # names are unique


def test_selecting_rows():
    assert [c.name for c in select("h4-vs-h3, cmpsel,h4-vs-h3")] == ["h4-vs-h3", "cmpsel"]
    assert select(None) == COMPARISONS
    with pytest.raises(UnknownComparison, match="unknown comparison 'h5'"):
        select("h4-vs-h1,h5")
    with pytest.raises(UnknownComparison):
        select(",")
