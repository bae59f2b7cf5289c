"""Bad usage and unreadable input exit 2 with one line, everywhere: a typo in CI must not
look like a reproduced bug (exit 1) or a clean run (exit 0)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def agxfuzz(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(
    "args, message",
    [
        (("verify", "no/such.agx"), "no/such.agx: cannot read: No such file or directory"),
        (("check", "no/such.agx"), "no/such.agx: cannot read: No such file or directory"),
        (("verify", "tests"), "tests: cannot read: Is a directory"),
        (("repro", "no/such.json"), "no/such.json: cannot read: No such file or directory"),
        (("tv", "no/such.agx", "no/such.agx"), "no/such.agx: cannot read"),
        (("reduce", "no/such.agx", "--passes", "dce"), "no/such.agx: cannot read"),
        (("run", "--examples", "1", "--pass-cmd", '"unterminated'),
         "agxfuzz: --pass-cmd: No closing quotation"),
        (("run", "--examples", "1", "--pass-cmd", "/nonexistent/prog"),
         "agxfuzz: --pass-cmd: no such program: /nonexistent/prog"),
        (("opt", str(GOLDEN / "loop_prefix_sum.agx"), "-p", "nosuch"),
         "agxfuzz: unknown pass 'nosuch'"),
    ],
)
def test_bad_usage_exits_2_with_one_line(args, message):
    result = agxfuzz(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.agx"
    path.write_bytes(b"\xef\xbb\xbf" + (GOLDEN / "loop_prefix_sum.agx").read_bytes())
    result = agxfuzz("verify", str(path))
    assert result.returncode == 0, result.stderr


def test_a_buffer_over_the_limit_is_refused_before_interpreting_and_the_limit_can_be_raised(tmp_path):
    path = tmp_path / "big.agx"
    path.write_text("func @big(u0:ptr[134217728]) {\nb0:\n  stop\n}\n")
    assert agxfuzz("verify", str(path)).returncode == 0  # the format allows it
    refused = agxfuzz("interp", str(path), "--threads", "1", "--seed", "1")
    assert refused.returncode == 2
    assert "over the interpreter's limit of 64 MB per buffer" in refused.stderr
    raised = agxfuzz("--max-buffer", "256", "interp", str(path), "--threads", "1", "--seed", "1")
    assert raised.returncode == 0, raised.stderr


@pytest.mark.parametrize("command", [
    ("check",), ("interp",), ("reduce", "--passes", "dce"), ("tv", "SAME"),
])
def test_a_program_that_does_not_parse_is_bad_input_where_1_means_fails(command):
    """`check` exit 1 means "a pass fails": a file that does not parse is not that."""
    bad = str(GOLDEN / "parse_unknown_opcode.agx")
    args = [bad if part == "SAME" else part for part in command[1:]]
    result = agxfuzz(command[0], bad, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "unknown opcode 'iadx'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["verify", "fmt"])
def test_for_verify_and_fmt_a_parse_error_is_the_verdict(command):
    result = agxfuzz(command, str(GOLDEN / "parse_unknown_opcode.agx"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "parse_unknown_opcode.agx:6:11: unknown opcode 'iadx'" in result.stderr


def test_a_program_that_does_not_verify_is_bad_input_for_check():
    result = agxfuzz("check", str(GOLDEN / "verify_use_not_dominated.agx"), "--passes", "dce")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not dominated" in result.stderr


def test_a_malformed_inputs_file_is_bad_input_for_check(tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text("[")
    result = agxfuzz("check", str(GOLDEN / "loop_prefix_sum.agx"), "--passes", "dce",
                     "--inputs", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not a list of input sets" in result.stderr


def test_check_with_every_pass_by_default_is_green_on_a_valid_golden():
    """By default `check` runs the campaign's pipelines: machine passes after the steps that
    bring a program to their level, not all passes chained into a false crash."""
    result = agxfuzz("check", str(GOLDEN / "device_load_formats.agx"), "--seed", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every oracle agrees" in result.stdout


def test_an_endless_file_is_refused_not_read_into_memory():
    result = agxfuzz("verify", "/dev/zero")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "/dev/zero: larger than 64 MB" in result.stderr
