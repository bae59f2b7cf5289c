"""Runs every golden `.agx` file under tests/golden (and tests/golden/machine): its `; RUN:`
lines, whose FileCheck `CHECK` lines must match (docs/goldens.md).

The RUN lines run in this process (tests/lit_inprocess.py: lit's parsing and substitutions,
agxfuzz and filecheck called as functions), so the 90-odd files cost about a second rather
than a few hundred process start-ups; `lit tests/golden` runs the same lines in
subprocesses. A test below runs real lit on one golden of each kind, and wrong CHECKs are
shown to fail both ways.

Every golden that parses and verifies must also print back to itself once comments are
removed (kept here rather than as a RUN line: it needs every line of the program).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify
from tests.lit_inprocess import RunFailed, run_file, run_lit

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.agx")) + sorted((GOLDEN / "machine").glob("*.agx"))
CHECK_LINE = re.compile(r"; (?!RUN:|COM:)[A-Z]+(-(NEXT|NOT|DAG|LABEL|SAME|EMPTY))?: ")


def _without_comments(text: str) -> str:
    kept = []
    for line in text.splitlines():
        code = line.split(";", 1)[0].rstrip()
        if code:
            kept.append(code)
    return "\n".join(kept) + "\n"


def test_there_are_enough_golden_files():
    assert len(FILES) >= 80


def missing_lines(text: str) -> list[str]:
    """What a golden lacks of its minimum: a RUN line and a FileCheck line."""
    lines = text.splitlines()
    missing = []
    if not any(line.startswith("; RUN: ") for line in lines):
        missing.append("no RUN line")
    if not any(CHECK_LINE.match(line) for line in lines):
        missing.append("no CHECK line")
    return missing


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden(path: Path):
    text = path.read_text()
    lines = [line for line in text.splitlines() if line.startswith(";")]
    assert missing_lines(text) == []
    run_file(path)
    try:
        fn = parse_function(text, filename=path.name)
        valid = not verify(fn)
    except ParseError:
        valid = False
    if valid:
        assert print_function(fn) == _without_comments(text)
    else:  # an invalid program is a golden of the error: what its RUN lines check
        assert any(re.match(r"; RUN: not agxfuzz verify %s\b", line) for line in lines)


# One golden of each kind: opt and interp before and after the passes, liveness, machine
# passes on the wave interpreter, verify errors (`not`, `2>&1`).
UNDER_LIT = ["pass_cmpsel_icmp_swap.agx", "liveness_loop_back_edge.agx",
             "machine/lower_copies_Swap.agx", "verify_operand_rules.agx"]


def test_real_lit_runs_the_same_lines():
    """What runs in-process above runs under lit too (`lit tests/golden` runs them all)."""
    done = run_lit(*(GOLDEN / name for name in UNDER_LIT))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASS: agxfuzz-golden :: ") == len(UNDER_LIT), done.stdout


def _copy_golden(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A golden with one line changed, in a suite of its own (its own lit.cfg.py)."""
    shutil.copy(GOLDEN / "lit.cfg.py", tmp_path / "lit.cfg.py")
    text = (GOLDEN / name).read_text()
    assert text.count(old) == 1, old
    path = tmp_path / Path(name).name
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    "name, old, new, reported",
    [
        # an output of the interpreter, before and after the passes
        ("pass_cmpsel_icmp_swap.agx", "slot 0: 0x64, 0x64, 0x7, 0x7",
         "slot 0: 0x64, 0x64, 0x7, 0x8", "slot 0: 0x64, 0x64, 0x7, 0x8"),
        # a line of the pass's result
        ("pass_cmpsel_icmp_swap.agx", "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1 cond=ult",
         "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1 cond=ugt", "cond=ugt"),
        # a prefix of a line is not the line
        ("pass_cmpsel_icmp_swap.agx", "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1 cond=ult",
         "; CHECK: %r:32 = icmpsel %tid, u0, #100, u1", "u0, #100, u1"),
        # a pass that changes the program fails --expect-unchanged
        ("pass_cmpsel_icmp_swap.agx", "; CHECK: ; {{.*}}: changed",
         "; RUN: agxfuzz opt %s -p cmpsel --expect-unchanged\n; CHECK: ; {{.*}}: changed",
         "--expect-unchanged, but cmpsel reported a change"),
        # a live set
        ("liveness_loop_back_edge.agx", "; LIVE: live-out head: %tid %i %acc",
         "; LIVE: live-out head: %tid %i", "live-out head: %tid %i"),
        # where a parse error is
        ("parse_bad_minifloat.agx", "[[FILE]]:6:20:", "[[FILE]]:6:21:", ":6:21:"),
    ],
    ids=["output", "result-line", "line-prefix", "unchanged", "live-set", "parse-error"],
)
def test_a_wrong_check_fails(tmp_path, name, old, new, reported):
    path = _copy_golden(tmp_path, name, old, new)
    with pytest.raises(RunFailed) as failed:
        run_file(path)
    assert path.name in str(failed.value) and reported in str(failed.value), failed.value


def test_a_wrong_check_fails_under_lit_with_the_check_named(tmp_path):
    path = _copy_golden(tmp_path, "pass_cmpsel_icmp_swap.agx", "slot 0: 0x64, 0x64, 0x7, 0x7",
                        "slot 0: 0x64, 0x64, 0x7, 0x8")
    done = run_lit(path)
    assert done.returncode == 1
    assert "FAIL: agxfuzz-golden :: pass_cmpsel_icmp_swap.agx" in done.stdout
    assert "slot 0: 0x64, 0x64, 0x7, 0x8" in done.stdout, done.stdout


def test_a_golden_without_run_or_check_lines_is_refused(tmp_path):
    text = (GOLDEN / "out_of_fuel.agx").read_text()
    assert missing_lines(text) == []
    no_check = text.replace("; INTERP-LABEL: input set 0 (2 threads): out of fuel{{.*}}\n", "")
    assert missing_lines(no_check) == ["no CHECK line"]
    no_run = "\n".join(line for line in text.splitlines() if not line.startswith("; RUN:"))
    assert missing_lines(no_run) == ["no RUN line"]
    # and FileCheck itself refuses a RUN line whose prefix has no CHECK lines
    path = tmp_path / "out_of_fuel.agx"
    shutil.copy(GOLDEN / "lit.cfg.py", tmp_path / "lit.cfg.py")
    path.write_text(no_check)
    with pytest.raises(RunFailed, match="INTERP"):
        run_file(path)
