"""`agxfuzz stats` end to end: a small generated corpus writes the report, JSON, CSV, PNG
and the programs the report names; the same seed replays it on any number of jobs; a
directory corpus; bad usage exits 2 with one line."""

import csv
import json
from pathlib import Path

from agxir.text import parse_function
from fuzz.cli import main
from fuzz.stats.metrics import METRICS

SELECT = Path(__file__).resolve().parents[2] / "data" / "stats" / "select_worst_case.agx"
COMPARE = "h4-vs-h1,schedule-h4"


def _run(capsys, *argv):
    status = main(["stats", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _stable(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("compile_seconds", "jobs")}


def test_twenty_programs_end_to_end(tmp_path, capsys):
    out = tmp_path / "out"
    status, printed, err = _run(capsys, "--programs", "20", "--seed", "3", "--compare",
                                COMPARE, "--out", str(out), "--jobs", "2")
    assert status == 0, err
    assert "replay: agxfuzz stats --programs 20 --seed 3 --compare h4-vs-h1,schedule-h4" in printed
    assert "== h4-vs-h1: -cmpsel-uniform-compare +cmpsel" in printed
    summary = json.loads((out / "stats.json").read_text())
    assert summary["programs"] == 20 and summary["seed"] == 3
    assert [c["name"] for c in summary["comparisons"]] == ["h4-vs-h1", "schedule-h4"]
    programs = sorted(p.stem for p in (out / "programs").glob("*.agx"))
    assert len(programs) == 20
    for name in programs:  # each a readable SSA program
        assert parse_function((out / "programs" / f"{name}.agx").read_text()).level == "ssa"
    with open(out / "stats.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for comparison in summary["comparisons"]:
        for metric in METRICS:
            mine = [r for r in rows if r["comparison"] == comparison["name"] and r["metric"] == metric]
            record = comparison["metrics"][metric]
            assert len(mine) == comparison["programs"] == 20
            assert sum(int(r["before"]) for r in mine) == record["before"]
            assert sum(int(r["after"]) for r in mine) == record["after"]
            moved = [r for r in mine if r["before"] != r["after"]]
            assert len(moved) == record["affected"] == record["helped"] + record["hurt"]
            for entry in record["most_helped"] + record["most_hurt"]:
                assert entry["program"] in programs  # a reader can open it
            if record["ci95"] is not None:
                low, high = record["ci95"]
                assert low <= record["change"] <= high
    assert (out / "stats.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "report.txt").read_text() in printed
    # The same seed replays the run, in one process as in two.
    again = tmp_path / "again"
    status, _, err = _run(capsys, "--programs", "20", "--seed", "3", "--compare", COMPARE,
                          "--out", str(again), "--jobs", "1")
    assert status == 0, err
    assert _stable(json.loads((again / "stats.json").read_text())) == _stable(summary)


def test_a_directory_corpus(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "select.agx").write_text(SELECT.read_text())
    (corpus / "notes.txt").write_text("not a program")
    status, printed, err = _run(capsys, "--dir", str(corpus), "--compare", "h4-vs-h1",
                                "--out", str(tmp_path / "out"), "--jobs", "1")
    assert status == 0, err
    summary = json.loads((tmp_path / "out" / "stats.json").read_text())
    (row,) = summary["comparisons"]
    # Hand-counted in test_metrics: heuristic 1 -> 4 is 8 -> 7 instructions, 7 -> 10 pressure.
    assert (row["metrics"]["instrs"]["before"], row["metrics"]["instrs"]["after"]) == (8, 7)
    assert (row["metrics"]["pressure"]["before"], row["metrics"]["pressure"]["after"]) == (7, 10)
    assert row["metrics"]["instrs"]["most_helped"][0]["program"] == "select"
    assert "most HURT   pressure: select 7 -> 10 (+42.86%)" in printed


def test_a_bad_comparison_name_is_bad_usage(tmp_path, capsys):
    status, printed, err = _run(capsys, "--programs", "2", "--compare", "h4-vs-h1,nope",
                                "--out", str(tmp_path))
    assert status == 2 and printed == ""
    assert err.count("\n") == 1 and err.startswith("agxfuzz: --compare: unknown comparison 'nope'")


def test_a_malformed_file_is_reported_where_it_is(tmp_path, capsys):
    (tmp_path / "bad.agx").write_text("func @f() {\nentry:\n  %x:32 = frobnicate\n}\n")
    status, printed, err = _run(capsys, "--dir", str(tmp_path), "--out", str(tmp_path / "o"))
    assert status == 2 and printed == ""
    assert err.count("\n") == 1 and err.startswith(f"{tmp_path / 'bad.agx'}:3:")


def test_a_missing_directory_is_bad_usage(tmp_path, capsys):
    status, _, err = _run(capsys, "--dir", str(tmp_path / "nowhere"))
    assert status == 2 and err.startswith("agxfuzz: --dir ") and err.count("\n") == 1
