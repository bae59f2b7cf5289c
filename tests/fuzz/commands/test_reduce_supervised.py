"""`agxfuzz reduce` checks every candidate in a supervised child, as `run` does (issue 19): a
pass that exits, kills its process or outgrows --pass-memory is the candidate's finding and
is reduced like any other, never reduce's own death or a silent exit 0; without --passes it
runs what `check` runs for the file's level; a finding's input set beside it is used."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import pytest

from agxir.text import parse_function
from fuzz import cli
from fuzz.commands.units import TAKES_LEVEL, units_under_test

ROOT = Path(__file__).resolve().parents[3]
SAXPY = ROOT / "examples" / "saxpy.agx"
DIVERGING = ROOT / "tests" / "golden" / "diverging_branches.agx"

PASSES = """\
import os
import signal


def _has_iadd(fn):
    return any(ins.name == "iadd" for ins in fn.instructions())


def exits(fn):
    if _has_iadd(fn):
        os._exit(0)
    return False


def sigkills(fn):
    if _has_iadd(fn):
        os.kill(os.getpid(), signal.SIGKILL)
    return False


def hogs(fn):
    if _has_iadd(fn):
        bytearray(1 << 30)
    return False
"""


@pytest.fixture
def passes(tmp_path) -> Path:
    path = tmp_path / "hostile.py"
    path.write_text(PASSES)
    return path


def _reduce(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["reduce", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("attribute, oracle, message", [
    ("exits", "crash", "the pass took its process down (exited with status 0)"),
    ("sigkills", "crash", "the pass took its process down (killed by SIGKILL)"),
    ("hogs", "memory-limit", "the pass went past its memory limit of 64 MB (--pass-memory)"),
])
def test_a_pass_that_takes_its_process_down_is_reduced_in_children(
        passes, tmp_path, capsys, attribute, oracle, message):
    out = tmp_path / "small.agx"
    # In this very process: were any candidate run here, pytest itself would die.
    status, stdout, err = _reduce(capsys, str(DIVERGING), "--pass", f"{passes}:{attribute}",
                                  "--seed", "1", "--pass-memory", "64", "-o", str(out))
    assert status == 0, stdout + err
    assert f"hostile:{attribute}: {oracle}: {message}" in stdout
    text = out.read_text()
    assert f"; failure: hostile:{attribute} failed the {oracle} oracle" in text
    assert f"; message: {message}" in text
    reduced = parse_function(text)
    assert [ins.name for ins in reduced.instructions()] == ["iadd", "stop"]
    # The replay names the pass file absolutely and reproduces it.
    replay = next(line for line in stdout.splitlines() if line.startswith("replay: "))
    assert f"--pass {passes}:{attribute}" in replay
    assert ("--pass-memory 64" in replay) == (oracle == "memory-limit")  # found under it
    assert cli.main(shlex.split(replay[len("replay: "):])[1:]) == 1
    assert message in capsys.readouterr().out


def test_without_passes_a_correct_file_does_not_fail_and_nothing_is_written(tmp_path, capsys):
    """The false finding of issue 19: every pass chained into one pipeline crashed."""
    out = tmp_path / "saxpy.reduced.agx"
    status, stdout, err = _reduce(capsys, str(SAXPY), "--seed", "1", "-o", str(out))
    assert status == 1, stdout + err
    assert "pipelines `check` runs at the ssa level: nothing to reduce" in err
    assert "crash" not in stdout + err
    assert not out.exists()


def _lowered(steps: list[str]):
    from fuzz.passes_under_test import registered

    fn = parse_function(SAXPY.read_text())
    for name in steps:
        registered(name).run(fn)
    return fn


def test_every_machine_pass_takes_the_level_units_says_it_does():
    from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINES

    assert set(MACHINE_PASSES) <= set(TAKES_LEVEL)
    for pipeline in MACHINE_PIPELINES:
        for position, name in enumerate(pipeline):
            fn = _lowered(list(pipeline[:position]))
            assert fn.level == TAKES_LEVEL[name], (pipeline, name)


def test_below_ssa_the_default_pipelines_start_at_the_files_level(tmp_path, capsys):
    exec_level = tmp_path / "saxpy_exec.agx"
    from agxir.text import print_function

    exec_level.write_text(print_function(_lowered(["lower-cf"])))
    none = argparse.Namespace(passes=None, python_passes=[], pass_commands=[])
    units, pipelines = units_under_test(none, "exec")
    assert pipelines and all(TAKES_LEVEL[p[0].name] == "exec" for p in pipelines)
    assert "lower-cf" not in {unit.name for unit in units}
    # check and reduce run exactly these: a correct exec-level file is green.
    assert cli.main(["check", str(exec_level), "--seed", "1"]) == 0
    assert f"passes in {len(pipelines)} pipelines: every oracle agrees" in capsys.readouterr().out
    status, stdout, err = _reduce(capsys, str(exec_level), "--seed", "1")
    assert status == 1 and "runs at the exec level: nothing to reduce" in err
    # A machine pass named alone starts at the file's level too, not at lower-cf.
    named = argparse.Namespace(passes="lower-copies", python_passes=[], pass_commands=[])
    _, [pipeline] = units_under_test(named, "exec")
    assert [unit.name for unit in pipeline] == ["ra", "lower-phis", "lower-copies"]


def test_a_findings_input_set_beside_it_is_used(passes, tmp_path, capsys):
    program = tmp_path / "finding.agx"
    program.write_text(DIVERGING.read_text())
    fn = parse_function(DIVERGING.read_text())
    from oracles.inputs import random_input_sets

    [one] = random_input_sets(fn, 3, 7, 1)
    beside = tmp_path / "finding.inputs.json"
    beside.write_text(json.dumps([one.to_json()]))
    status, stdout, err = _reduce(capsys, str(program), "--pass", f"{passes}:exits")
    assert status == 0, stdout + err
    assert f"inputs: {beside} (beside {program}" in stdout
    assert "reducing 9 instructions, 4 blocks, 3 threads" in stdout
    assert beside.read_text() == json.dumps([one.to_json()])  # never written over


def test_a_finding_is_reduced_from_its_record_with_its_passes_and_inputs(passes, tmp_path, capsys):
    findings = tmp_path / "findings"
    assert cli.main(["check", str(DIVERGING), "--pass", f"{passes}:sigkills", "--seed", "1",
                     "--out", str(findings)]) == 1
    capsys.readouterr()
    [record] = [p for p in findings.glob("*.json") if not p.name.endswith(".inputs.json")]
    reproducer = record.with_suffix(".agx")
    for given in (record, reproducer):  # the record, or the reproducer it sits beside
        out = tmp_path / f"from-{given.suffix[1:]}.agx"
        status, stdout, err = _reduce(capsys, str(given), "-o", str(out))
        assert status == 0, stdout + err
        assert f"passes: --pass {passes}:sigkills (from {record})" in stdout
        assert f"inputs: {record.with_suffix('')}.inputs.json (beside {reproducer}" in stdout
        assert [i.name for i in parse_function(out.read_text()).instructions()] == ["iadd", "stop"]
    not_a_record = tmp_path / "other.json"
    not_a_record.write_text("[]")
    status, _, err = _reduce(capsys, str(not_a_record))
    assert status == 2 and "other.json: not a finding record" in err
