"""fuzz.html_report.replay: a finding record replayed for the report: the pass before and after,
the rule that fired, the lanes that differ; and records that cannot be replayed."""

from __future__ import annotations

import json

import pytest

from fuzz.html_report.records import load_record, load_records
from fuzz.html_report.replay import (
    NOT_REPLAYED,
    PASSES,
    SAME,
    ReplayError,
    differences,
    replay,
    resolve_pipeline,
)
from oracles.outcomes import Returned
from tests.fuzz.html_report.findings_dir import CASES, write_finding


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    directory = tmp_path_factory.mktemp("findings")
    return directory, [write_finding(directory, *case) for case in CASES]


def test_a_refinement_finding_replays_with_its_lane_rule_and_changed_rows(findings):
    directory, written = findings
    record = load_record(written[0][1].record)
    result = replay(record)
    assert result.status == SAME, result.note
    assert result.step == record.pass_name == "fuzz.zoo:cmpsel_any_condition"
    assert [(lane.thread, lane.where, lane.expected, lane.got) for lane in result.lanes] == [
        (0, "output slot 0", "0x3c00", "0x0")]
    assert [rule for rule, _, _ in result.rules] == ["icmp-inv0"]
    assert result.before.highlighted == 1 and result.after.highlighted == 1
    assert "icmpsel %32, #0, %24, #0 cond=ugt" in result.before.dot
    assert result.input_summary == "1 thread, u0 = 0x1"


def test_a_dropped_store_shows_the_memory_word_that_differs(findings):
    directory, written = findings
    result = replay(load_record(written[1][1].record))
    assert result.status == SAME, result.note
    assert [(lane.thread, lane.where, lane.expected, lane.got) for lane in result.lanes] == [
        (None, "buffer u4 bytes 0..3", "00000000", "da000000")]
    assert result.before.highlighted == 1 and result.after.highlighted == 0  # only removed
    assert "no rewrite rule fired" in result.rule_note


def test_a_pass_file_that_is_gone_is_a_note_not_an_exception(tmp_path):
    module = tmp_path / "crashy.py"
    module.write_text("def boom(fn):\n    raise RuntimeError('boom at the first block')\n")
    from tests.fuzz.html_report.findings_dir import CMPSEL

    _, files = write_finding(tmp_path, f"{module}:boom", CMPSEL, CASES[0][2])
    crashed = replay(load_record(files.record))
    assert crashed.status == SAME
    assert crashed.after is None and "boom at the first block" in crashed.after_error
    assert crashed.before is not None and crashed.before.dot
    module.unlink()
    gone = replay(load_record(files.record))
    assert gone.status == NOT_REPLAYED
    assert "no such file" in gone.note and str(module) in gone.note


def test_a_command_pass_that_no_longer_exists_is_not_replayed(findings, tmp_path):
    directory, written = findings
    data = json.loads(written[0][1].record.read_text())
    data["flags"] = ["--pass-cmd", "/nonexistent/opt-tool --run"]
    data["pipeline"] = ["cmd:opt-tool"]
    data["file"] = str(written[0][1].reproducer)
    path = tmp_path / "cmd.json"
    path.write_text(json.dumps(data))
    result = replay(load_record(path))
    assert result.status == NOT_REPLAYED
    assert "no such program: /nonexistent/opt-tool" in result.note


def test_a_fixed_pass_no_longer_fails(findings, tmp_path):
    directory, written = findings
    data = json.loads(written[0][1].record.read_text())
    data["flags"] = ["--passes", "cmpsel"]
    data["pipeline"] = ["cmpsel"]
    data["pass"] = "cmpsel"
    path = tmp_path / "fixed.json"
    path.write_text(json.dumps(data))
    (tmp_path / written[0][1].reproducer.name).write_text(written[0][1].reproducer.read_text())
    result = replay(load_record(path))
    assert result.status == PASSES and result.note.startswith("fixed, or")
    assert result.lanes == [] and result.lanes_note == "every lane agrees on this input set"


def test_a_zoo_name_resolves_to_the_flags_own_pass():
    """The zoo records its variant under its zoo name, and replays it from its module."""
    flags = ["--passes", "lower-cf,ra", "--pass", "fuzz.zoo.exec_cmp_variants:at_compare"]
    pipeline = resolve_pipeline(["lower-cf", "ra", "zoo-fuse-exec-cmp-at-compare"], flags)
    assert [unit.flag for unit in pipeline] == [
        ("--passes", "lower-cf"), ("--passes", "ra"),
        ("--pass", "fuzz.zoo.exec_cmp_variants:at_compare")]
    with pytest.raises(ReplayError, match="neither the record's flags"):
        resolve_pipeline(["lower-cf", "mystery"], ["--passes", "lower-cf"])
    with pytest.raises(ReplayError, match="unknown pass 'nope'"):
        resolve_pipeline(["nope"], ["--passes", "nope"])
    with pytest.raises(ReplayError, match="flag-value pairs"):
        resolve_pipeline(["dce"], ["--passes"])


def test_differences_lists_every_slot_and_memory_word():
    want = Returned({"u1": bytes(8)}, ((1, 2), (3, None)))
    got = Returned({"u1": bytes(4) + b"\x01\x00\x00\x00"}, ((1, 5), (3, 4)))
    assert [(d.thread, d.where, d.expected, d.got) for d in differences(want, got)] == [
        (0, "output slot 1", "0x2", "0x5"),
        (1, "output slot 1", "not written", "0x4"),
        (None, "buffer u1 bytes 4..7", "00000000", "01000000"),
    ]


def test_other_json_files_are_skipped_with_a_reason(findings, tmp_path):
    (tmp_path / "summary.json").write_text('{"seed": 1}')
    (tmp_path / "broken.json").write_text('{"pass": ')
    (tmp_path / "x.inputs.json").write_text("[]")
    (tmp_path / ".agxfuzz-db" / "marks").mkdir(parents=True)  # the campaign's database
    (tmp_path / ".agxfuzz-db" / "marks" / "entry.json").write_text("{}")
    records, skipped = load_records(tmp_path)
    assert records == []
    assert sorted((s.path.name, s.reason.split(":")[0]) for s in skipped) == [
        ("broken.json", "not JSON"), ("summary.json", "not a finding record (no pass, oracle and message)")]


def test_an_input_liveness_finding_shows_the_input_and_says_why_it_passes_now(tmp_path):
    """The zoo's wrong liveness analyses find the input program itself: no pass, one
    picture, and a replay with agxir's own analysis that agrees with the reference."""
    program = ("func @fuzz() {\nb0:\n  jump -> b1\nb1:\n  %1:32 = phi [#0, b0]\n  stop\n}\n")
    (tmp_path / "input-liveness.agx").write_text(program)
    (tmp_path / "input-liveness.json").write_text(json.dumps({
        "pass": "(input)", "oracle": "liveness", "message": "live_in[b1]: analysis has extra %1",
        "pipeline": [], "flags": [], "file": "input-liveness.agx", "inputs": None}))
    result = replay(load_record(tmp_path / "input-liveness.json"))
    assert result.status == PASSES and "does not name the analysis" in result.note
    assert result.after is None and result.before.label == "the input program"
    assert '"b0" -> "b1";' in result.before.dot
    assert result.lanes == [] and result.lanes_note == ""


def test_a_pass_that_hangs_or_kills_its_process_is_shown_never_raised(tmp_path):
    from tests.fuzz.html_report.findings_dir import CMPSEL

    module = tmp_path / "hostile.py"
    module.write_text("import os\n\ndef spin(fn):\n    while True:\n        pass\n\n"
                      "def leave(fn):\n    os._exit(7)\n")
    record = tmp_path / "spin.json"
    (tmp_path / "spin.agx").write_text(CMPSEL)
    record.write_text(json.dumps({
        "pass": "hostile:spin", "oracle": "timeout", "message": "the pass ran longer than 0.5 s",
        "pipeline": ["hostile:spin"], "flags": ["--pass", f"{module}:spin"],
        "file": "spin.agx", "inputs": None}))
    spun = replay(load_record(record), pass_timeout=0.5)
    assert spun.status == SAME and spun.after is None
    assert spun.after_error == "the pass ran longer than 0.5 s" and spun.before.dot
    data = json.loads(record.read_text())
    data.update({"pass": "hostile:leave", "oracle": "crash", "pipeline": ["hostile:leave"],
                 "flags": ["--pass", f"{module}:leave"]})
    record.write_text(json.dumps(data))
    left = replay(load_record(record))
    assert left.status == NOT_REPLAYED
    assert left.note == "the replay's process exited with status 7: the pass took it down"
