"""`check` says "every oracle agrees" only when every step was judged: a step whose output
ran out of its budget (inconclusive) or a program lower-cf declined is named, not hidden
behind a green line (issue 19). The exit stays 0: neither is a finding (docs/guarantees.md)."""

import json
import subprocess
import sys
from pathlib import Path

from bench.programs import idle_walk_text

ROOT = Path(__file__).resolve().parents[3]


def _check(path: Path, inputs: Path, *passes: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz", "check", str(path), "--inputs",
                           str(inputs), *passes], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_an_inconclusive_step_is_named_not_called_agreement(tmp_path):
    program = tmp_path / "walk.agx"
    program.write_text(idle_walk_text(2000))
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps([{"threads": 2, "scalars": {"u0": 300}}]))
    result = _check(program, inputs, "--passes", "lower-cf")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every oracle agrees" not in result.stdout
    assert "no oracle disagrees on 1 input sets; not judged: refinement inconclusive on 1 " \
           "steps" in result.stdout


def test_a_fully_judged_check_still_says_every_oracle_agrees(tmp_path):
    program = tmp_path / "walk.agx"
    program.write_text(idle_walk_text(4))
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps([{"threads": 2, "scalars": {"u0": 3}}]))
    result = _check(program, inputs, "--passes", "lower-cf")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("lower-cf: every oracle agrees on 1 input sets")
