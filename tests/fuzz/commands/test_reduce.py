"""`agxfuzz reduce` end to end: output files, the input left alone, Ctrl-C, nothing to reduce."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz import cli
from fuzz.commands.errors import one_line_errors
from fuzz.commands.reduce import _replay, default_out, run_reduce
from fuzz.reduce.reducer import SameFailure

ROOT = Path(__file__).resolve().parents[3]
WRONG_CMPSEL = f"{ROOT / 'examples' / 'wrong_cmpsel.py'}:wrong_cmpsel"

PROGRAM = """\
; a hand-written program with a compare/select for wrong_cmpsel to get wrong
func @victim(u0:ptr[256], u1:32, u2:32, u3:ptr[128]) {
entry:
  %tid:32 = get_sr sr=thread_id
  %a:32 = iadd %tid, u1 shift=1
  %b:32 = and %a, #63
  %c:32 = device_load u0, %b fmt=i32 shift=0
  %d:32 = imad %c, %tid, u2 shift=0
  %e:32 = xor %d, %a
  %f:16 = icmp %e, u2 cond=ult inv=0
  if_icmp %f, #0 cond=ueq inv=1 -> left, right
left:
  %g:32 = iadd %e, #7 shift=2
  %h:32 = asr %g, #3
  %i:32 = fadd %h, #0.5
  jump -> join
right:
  %j:32 = bitop %e, %c tt=0x6
  %k:32 = mov %j
  %l:32 = iadd %k, %tid shift=0
  jump -> join
join:
  %m:32 = phi [%i, left], [%l, right]
  %n:16 = icmp %m, %tid cond=slt inv=1
  %o:32 = icmpsel %n, #0, %m, %e cond=ueq
  %p:32 = iadd %o, #1 shift=0
  %q:32 = and %tid, #31
  device_store %p, u3, %q fmt=i32 shift=0
  %s:32 = or %p, %a
  export %s slot=0
  export %o slot=1
  stop
}
"""

CLEAN = """\
func @clean(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %a:32 = iadd %tid, u0 shift=0
  export %a slot=0
  stop
}
"""


def parse(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(["reduce", *argv])


def reduce(*argv: str) -> int:
    """run_reduce as `agxfuzz` would call it: user errors become exit statuses."""
    try:
        return run_reduce(parse(*argv))
    except cli.UserError as error:
        print(one_line_errors(str(error)), file=sys.stderr)
        return error.exit_status


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim.agx"
    path.write_text(PROGRAM)
    return path


def test_default_out_sits_next_to_the_input():
    assert default_out("a/b/prog.agx") == Path("a/b/prog.reduced.agx")
    assert default_out("prog.txt") == Path("prog.txt.reduced.agx")


def test_the_replay_of_an_input_liveness_finding_is_the_liveness_command():
    # An empty --passes is a usage error; `liveness` exits 1 while the analysis disagrees.
    assert _replay(Path("r.agx"), (), ["--seed", "1"]) == "agxfuzz liveness r.agx"


def test_an_unwritable_out_is_a_one_line_error(victim, tmp_path, capsys):
    out = tmp_path / "no" / "such" / "dir"
    out.parent.parent.write_text("a file where a directory should be")
    assert reduce(str(victim), "--pass", WRONG_CMPSEL, "--seed", "1", "-o", str(out)) == 2
    assert capsys.readouterr().err.startswith(f"agxfuzz: {out}: cannot write: ")


def test_reduces_writes_and_never_touches_the_input(victim, capsys):
    before = victim.read_bytes()
    status = reduce(str(victim), "--pass", WRONG_CMPSEL, "--passes", "copyprop,dce",
                    "--seed", "1")
    output = capsys.readouterr().out
    assert status == 0, output
    assert victim.read_bytes() == before
    out = victim.with_name("victim.reduced.agx")
    text = out.read_text()
    assert text.startswith(f"; agxfuzz reduce: a reduced reproducer of {victim}\n")
    assert "; failure: wrong_cmpsel:wrong_cmpsel failed the refinement oracle" in text
    from agxir.text import parse_function

    assert parse_function(text).instruction_count() <= 8
    for name in ("drop-passes", "remove-instruction", "replace-operand", "shrink-inputs"):
        assert name in output
    replay = next(line for line in output.splitlines() if line.startswith("replay: "))
    argv = shlex.split(replay[len("replay: "):])
    assert argv[:3] == ["agxfuzz", "check", str(out)]
    assert "--inputs" in argv and Path(argv[argv.index("--inputs") + 1]).exists()
    # The replay command really reproduces the same failure.
    assert cli.main(argv[1:]) == 1
    assert "wrong_cmpsel:wrong_cmpsel: refinement: thread" in capsys.readouterr().out


def test_refuses_to_write_over_the_input(victim, capsys):
    before = victim.read_bytes()
    assert reduce(str(victim), "-o", str(victim), "--pass", WRONG_CMPSEL, "--seed", "1") == 2
    assert "refusing to write" in capsys.readouterr().err
    assert victim.read_bytes() == before


def test_a_program_that_does_not_fail_exits_1(tmp_path, capsys):
    path = tmp_path / "clean.agx"
    path.write_text(CLEAN)
    assert reduce(str(path), "--passes", "dce", "--seed", "3") == 1
    err = capsys.readouterr().err.strip()
    assert err == f"agxfuzz: {path} does not fail under dce: nothing to reduce"
    assert not default_out(str(path)).exists()


def test_oracle_filter_and_unknown_oracle(victim, capsys):
    assert reduce(str(victim), "--pass", WRONG_CMPSEL, "--oracle", "crash", "--seed", "1") == 1
    assert "does not fail the crash oracle under" in capsys.readouterr().err
    assert reduce(str(victim), "--pass", WRONG_CMPSEL, "--oracle", "bogus", "--seed", "1") == 2
    assert "unknown oracle 'bogus'" in capsys.readouterr().err


def test_ctrl_c_keeps_the_smallest_so_far(victim, capsys, monkeypatch):
    calls = {"n": 0}
    real = SameFailure.__call__

    def interrupted_later(self, case):
        calls["n"] += 1
        if calls["n"] > 12:
            raise KeyboardInterrupt
        return real(self, case)

    monkeypatch.setattr(SameFailure, "__call__", interrupted_later)
    before = victim.read_bytes()
    status = reduce(str(victim), "--pass", WRONG_CMPSEL, "--seed", "1", "-o",
                    str(victim.with_name("small.agx")))
    output = capsys.readouterr().out
    assert status == 130
    assert f"interrupted: kept the smallest reproducer so far in {victim.with_name('small.agx')}" \
        in output
    assert victim.read_bytes() == before
    from agxir.text import parse_function

    kept = parse_function(victim.with_name("small.agx").read_text())
    assert kept.instruction_count() < parse_function(PROGRAM).instruction_count()
    monkeypatch.setattr(SameFailure, "__call__", real)
    replay = next(line for line in output.splitlines() if line.startswith("replay: "))
    assert cli.main(shlex.split(replay[len("replay: "):])[1:]) == 1


def test_inputs_from_a_file_are_kept_when_unchanged_and_never_overwritten(victim, tmp_path):
    from agxir.text import parse_function
    from oracles.inputs import random_input_sets

    sets = random_input_sets(parse_function(PROGRAM), 32, seed=1, count=2)
    inputs = tmp_path / "case.inputs.json"
    inputs.write_text(json.dumps([s.to_json() for s in sets]))
    before = inputs.read_bytes()
    # OUT's sidecar would be case.inputs.json itself: refused.
    assert reduce(str(victim), "--pass", WRONG_CMPSEL, "--inputs", str(inputs), "-o",
                  str(tmp_path / "case.agx")) == 2
    assert reduce(str(victim), "--pass", WRONG_CMPSEL, "--inputs", str(inputs)) == 0
    assert inputs.read_bytes() == before
    assert victim.with_name("victim.reduced.inputs.json").exists()


def test_time_budget_keeps_a_valid_reproducer(victim, capsys):
    status = reduce(str(victim), "--pass", WRONG_CMPSEL, "--seed", "1", "--timeout", "0.001")
    output = capsys.readouterr().out
    assert status == 0
    assert "time budget of 0.001 s used up" in output
    from agxir.text import parse_function
    from agxir.verifier import verify

    assert not verify(parse_function(victim.with_name("victim.reduced.agx").read_text()))


def test_through_the_real_command_line(victim):
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "reduce", str(victim), "--pass", WRONG_CMPSEL,
         "--seed", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "replay: agxfuzz check" in result.stdout
