"""The agxfuzz command line as a user runs it: exit codes, one-line errors, JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"


def agxfuzz(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fuzz", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=600,
    )


def test_version_and_help():
    assert agxfuzz("--version").stdout.strip() == "agxfuzz 0.1.0"
    result = agxfuzz("--help")
    assert result.returncode == 0
    for command in ("fmt", "verify", "interp"):
        assert command in result.stdout


def test_help_does_not_import_heavy_modules():
    code = (
        "import sys; from fuzz.cli import build_parser; build_parser();"
        "print(sorted(m for m in ('numpy', 'z3', 'hypothesis', 'agxir.text') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.stdout.strip() == "[]"


def test_fmt_prints_canonical_text():
    result = agxfuzz("fmt", str(EXAMPLES / "saxpy.agx"))
    assert result.returncode == 0
    assert result.stdout.startswith("func @saxpy(u0:ptr[256], u1:ptr[256], u2:32) {\n")
    assert ";" not in result.stdout


def test_verify_ok_and_failures():
    assert agxfuzz("verify", str(EXAMPLES / "saxpy.agx")).returncode == 0
    parse_error = agxfuzz("verify", str(GOLDEN / "parse_missing_attribute.agx"))
    assert parse_error.returncode == 1
    assert parse_error.stderr.strip().endswith(":6:11: missing attribute 'shift'")
    assert "Traceback" not in parse_error.stderr
    verifier_error = agxfuzz("verify", str(GOLDEN / "verify_use_not_dominated.agx"))
    assert verifier_error.returncode == 1
    assert "use of %a is not dominated by its definition" in verifier_error.stderr


def test_missing_file_is_one_line():
    result = agxfuzz("verify", "no/such/file.agx")
    assert result.returncode == 2  # unreadable input is bad usage, not a verifier result
    assert result.stderr.count("\n") == 1 and "cannot read" in result.stderr


def test_bad_flags_exit_2():
    assert agxfuzz("interp", str(EXAMPLES / "saxpy.agx"), "--threads", "zero").returncode == 2
    assert agxfuzz("interp", str(EXAMPLES / "saxpy.agx"), "--threads", "0").returncode == 2
    assert agxfuzz("frobnicate").returncode == 2


def test_interp_seed_replays_and_json_has_outcomes():
    first = agxfuzz("interp", str(EXAMPLES / "prefix_sum.agx"), "--threads", "8", "--seed", "5")
    again = agxfuzz("interp", str(EXAMPLES / "prefix_sum.agx"), "--threads", "8", "--seed", "5")
    assert first.returncode == 0 and first.stdout == again.stdout
    assert first.stdout.startswith("seed: 5\n")
    result = agxfuzz(
        "interp", str(EXAMPLES / "prefix_sum.agx"), "--threads", "4", "--sets", "2",
        "--seed", "9", "--json",
    )
    report = json.loads(result.stdout)
    assert report["seed"] == 9
    assert [o["outcome"] for o in report["outcomes"]] == ["returned", "returned"]
    assert len(report["outcomes"][0]["outputs"]) == 4


def test_interp_prints_a_seed_when_none_is_given():
    result = agxfuzz("interp", str(EXAMPLES / "saxpy.agx"), "--threads", "2")
    seed = int(result.stdout.splitlines()[0].removeprefix("seed: "))
    replay = agxfuzz("interp", str(EXAMPLES / "saxpy.agx"), "--threads", "2", "--seed", str(seed))
    assert replay.stdout == result.stdout


def test_interp_given_inputs(tmp_path):
    inputs = [{"threads": 2, "scalars": {"u2": 0x40000000},
               "buffers": {"u0": ("0000803f" * 64), "u1": ("00000040" * 64)}}]
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(inputs))
    result = agxfuzz("interp", str(EXAMPLES / "saxpy.agx"), "--inputs", str(path), "--json")
    outputs = json.loads(result.stdout)["outcomes"][0]["outputs"]
    assert outputs == [[0x40800000], [0x40800000]]  # 2.0 * 1.0 + 2.0
    path.write_text(json.dumps([{"threads": 1, "buffers": {"u0": "00"}}]))
    bad = agxfuzz("interp", str(EXAMPLES / "saxpy.agx"), "--inputs", str(path))
    assert bad.returncode == 2 and "holds 1 bytes" in bad.stderr  # bad input, not a result
