"""`agxfuzz audit --nir FILE` through the real CLI: the table, details, summary line, JSON,
`--lists`/`--sizes`, and the exit statuses (0 all proved, 1 counterexample or malformed rule,
3 something unproved, 2 a bad file or bad usage, always one line, never a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "nir"


def agxfuzz(*args):
    done = subprocess.run([sys.executable, "-m", "fuzz", "audit", *args], capture_output=True,
                          text=True, timeout=600)
    return done.returncode, done.stdout, done.stderr


def test_all_verified_is_exit_0_with_one_row_per_instance(tmp_path):
    report = tmp_path / "nir.json"
    code, out, err = agxfuzz("--nir", str(DATA / "right_rules.py"), "--lists", "sized,booleans",
                             "--json", str(report))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("agxfuzz audit --nir ") and "12 rules in 2 lists (sized, booleans)" in lines[0]
    rows = [line for line in lines if line.startswith(("sized[", "booleans["))]
    data = json.loads(report.read_text())
    assert len(rows) == len(data["instances"]) and all("verified" in row for row in rows)
    assert lines[-1] == data["summary"]
    assert lines[-1].startswith(f"nir audit: right_rules.py: {len(rows)} instances of 12 rules: "
                                f"{len(rows)} verified, 0 counterexample, 0 unsupported")


def test_counterexamples_are_exit_1_with_replayed_values(tmp_path):
    report = tmp_path / "nir.json"
    code, out, _ = agxfuzz("--nir", str(DATA / "wrong_rules.py"), "--sizes", "32",
                           "--json", str(report))
    assert code == 1
    assert "counterexample: wrong[1] @1 (a:32): (ult (iadd a 1) a) -> False" in out
    assert "  values: a=0xffffffff" in out
    assert "search: 0x1; replacement: 0x0 (confirmed by concrete replay)" in out
    assert "replacement: undefined (amul overflow)" in out
    data = json.loads(report.read_text())
    assert {i["sizes"].split()[0] for i in data["instances"]} <= {"@32", "@1"}
    assert all(i["counterexample"]["confirmed"] for i in data["instances"]
               if i["verdict"] == "counterexample")


def test_unsupported_only_is_exit_3_and_lists_reasons_and_predicates():
    code, out, _ = agxfuzz("--nir", str(DATA / "unsupported_rules.py"))
    assert code == 3
    assert "opcode fsin has no semantics" in out
    assert "counterexample unless a(is_made_up_predicate) (not modelled)" in out
    assert "  unmodelled      4  is_made_up_predicate" in out
    assert out.splitlines()[-1].startswith("nir audit: unsupported_rules.py: 8 instances of 3 "
                                           "rules: 0 verified, 0 counterexample, 8 unsupported")


def test_malformed_rules_are_exit_1():
    code, out, _ = agxfuzz("--nir", str(DATA / "malformed_rules.py"))
    assert code == 1
    assert "malformed[2] : replacement variable b does not occur in the search" in out


@pytest.mark.parametrize("args, message", [
    (["--nir", str(DATA / "bad_syntax.py")], "bad_syntax.py:4:6: invalid syntax"),
    (["--nir", str(DATA / "bad_raise.py")], "bad_raise.py:3: NameError"),
    (["--nir", str(DATA / "nope.py")], "nope.py: cannot read"),
    (["--nir", str(DATA / "right_rules.py"), "--lists", "nosuch"], "no rule list named nosuch"),
    (["--nir", str(DATA / "right_rules.py"), "--sizes", "12"], "--sizes takes bit sizes"),
    (["--nir", str(DATA / "right_rules.py"), "--pass", "branch-cmp"], "cannot be combined"),
    (["--sizes", "32"], "--lists and --sizes need --nir FILE"),
])
def test_bad_files_and_usage_are_exit_2_in_one_line(args, message):
    code, out, err = agxfuzz(*args)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
