"""`agxfuzz tv` (fuzz.commands.tv.run_tv): output, JSON and exit statuses.

Most tests call `run_tv` with an argparse.Namespace; the last ones run `python -m fuzz tv`
and are skipped until the subcommand is wired into fuzz/cli.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from fuzz.commands.errors import UserError
from fuzz.commands.tv import run_tv

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden"

BEFORE = """func @inverted(u0:32, u1:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %t:16 = icmp %tid, u0 cond=ult inv=1
  %r:32 = icmpsel %t, #0, u1, #100 cond=ueq
  export %r slot=0
  stop
}
"""
RIGHT = """func @inverted(u0:32, u1:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %r:32 = icmpsel %tid, u0, u1, #100 cond=ult
  export %r slot=0
  stop
}
"""
WRONG = RIGHT.replace("u1, #100", "#100, u1")  # what examples/wrong_cmpsel.py makes


def hard(fused: bool) -> str:
    lines = ["func @hard(u0:32, u1:32, u2:32) {", "entry:", "  %x0:32 = fadd u0, u1"]
    for i in range(1, 7):
        if fused:
            lines.append(f"  %x{i}:32 = ffma %x{i - 1}, u1, u2")
        else:
            lines.append(f"  %m{i}:32 = fmul %x{i - 1}, u1")
            lines.append(f"  %x{i}:32 = fadd %m{i}, u2")
    return "\n".join([*lines, "  export %x6 slot=0", "  stop", "}", ""])


@pytest.fixture
def files(tmp_path):
    def write(**texts):
        paths = {}
        for name, text in texts.items():
            path = tmp_path / f"{name}.agx"
            path.write_text(text)
            paths[name] = str(path)
        return paths

    return write


def tv(before, after, threads=32, timeout=10000, as_json=False):
    return run_tv(Namespace(before=before, after=after, threads=threads, timeout=timeout,
                            json=as_json))


def test_proved(files, capsys):
    f = files(before=BEFORE, after=RIGHT)
    assert tv(f["before"], f["after"]) == 0
    assert capsys.readouterr().out == "proved\n"


def test_counterexample_prints_inputs_and_the_interpreter_verdict(files, capsys):
    f = files(before=BEFORE, after=WRONG)
    assert tv(f["before"], f["after"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("counterexample: thread 0: output slot 0: BEFORE 0x")
    assert lines[1].startswith("input set: ")
    inputs = json.loads(lines[1].removeprefix("input set: "))
    assert inputs["threads"] == 1 and set(inputs["scalars"]) == {"u0", "u1"}
    assert lines[2].startswith("interpreter confirms: thread 0 output slot 0")


def test_json_counterexample(files, capsys):
    f = files(before=BEFORE, after=WRONG)
    assert tv(f["before"], f["after"], as_json=True) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "counterexample"
    assert data["interpreter_confirms"] is True
    assert data["thread"] == 0 and data["input_set"]["threads"] == 1


def test_json_proved(files, capsys):
    f = files(before=BEFORE, after=RIGHT)
    assert tv(f["before"], f["after"], as_json=True) == 0
    assert json.loads(capsys.readouterr().out) == {"result": "proved"}


def test_unknown_exits_3(files, capsys):
    f = files(before=hard(True), after=hard(False))
    assert tv(f["before"], f["after"], timeout=1) == 3
    assert capsys.readouterr().out.startswith("unknown: ")


def test_a_loop_is_unknown_not_bad_usage(files, capsys):
    """tv cannot decide a function with a loop: exit 3 as for a z3 timeout (guarantees.md)."""
    f = files(before=BEFORE)
    loop = str(GOLDEN / "pass_dce_phi_cycle.agx")
    assert tv(loop, f["before"]) == 3
    assert capsys.readouterr().out == (
        "unknown: tv decides loop-free functions only; BEFORE has a loop at block head\n")
    assert tv(str(GOLDEN / "pass_cmpsel_icmp_swap.agx"), loop, as_json=True) == 3
    assert json.loads(capsys.readouterr().out) == {
        "result": "unknown",
        "reason": "tv decides loop-free functions only; AFTER has a loop at block head"}


def test_parse_errors_and_mismatched_buffers(files):
    bad = str(GOLDEN / "parse_missing_attribute.agx")
    f = files(before=BEFORE, a="func @a(u0:ptr[16]) {\nentry:\n  stop\n}\n",
              b="func @a(u0:ptr[8]) {\nentry:\n  stop\n}\n")
    with pytest.raises(UserError, match=":6:11: missing attribute 'shift'"):
        tv(bad, f["before"])
    with pytest.raises(UserError, match="different buffers"):
        tv(f["a"], f["b"])


# --- through the real command line ------------------------------------------------------------


def agxfuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_command_line_exit_statuses(files):
    f = files(before=BEFORE, right=RIGHT, wrong=WRONG)
    assert agxfuzz("tv", f["before"], f["right"]).returncode == 0
    result = agxfuzz("tv", f["before"], f["wrong"], "--threads", "4", "--timeout", "5000")
    assert result.returncode == 1 and result.stdout.startswith("counterexample: thread ")
    loop = agxfuzz("tv", str(GOLDEN / "pass_dce_phi_cycle.agx"), f["right"])
    assert loop.returncode == 3, loop.stdout + loop.stderr
    assert loop.stdout.startswith("unknown: tv decides loop-free functions only")
    assert loop.stderr == ""
