"""Smaller never-a-false-green guarantees: a check with a pass that exits 0 fails, findings
of one bug are one finding, and what is written can be read by others."""

import os
import stat
import subprocess
import sys
from pathlib import Path

from agxir.text import parse_function
from fuzz.campaign import CampaignConfig, CampaignResult, _record
from fuzz.findings import write_atomically
from fuzz.harness import Finding, Stats
from fuzz.passes_under_test import python_pass

ROOT = Path(__file__).resolve().parents[2]
SELECT = """\
func @f() {
b0:
  %t:32 = icmp #0, #0 cond=ueq inv=1
  %s:32 = icmpsel %t, #0, #1, #2 cond=ueq
  export %s slot=SLOT
  stop
}
"""


def test_check_with_a_pass_that_exits_zero_is_a_crash_not_a_pass(tmp_path):
    module = tmp_path / "quits.py"
    module.write_text("import sys\n\ndef quits(fn):\n    sys.exit(0)\n")
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "check", "tests/golden/diverging_branches.agx",
         "--pass", f"{module}:quits"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "crash: SystemExit: 0" in result.stdout


def test_two_findings_of_one_wrong_rewrite_are_one_finding_with_one_more_like_it():
    wrong = python_pass(f"{ROOT / 'examples' / 'wrong_cmpsel.py'}:wrong_cmpsel")
    config = CampaignConfig(seed=1, pipelines=[[wrong]], reduce_seconds=0)
    result = CampaignResult(Stats(), 0.0)
    seen: set[str] = set()
    for slot, message in ((0, "thread 0 output slot 0: input 0x1, output 0x2"),
                          (3, "thread 0 output slot 3: input 0x1, output 0x2 differently")):
        program = SELECT.replace("SLOT", str(slot))
        parse_function(program)
        finding = Finding(wrong.name, "refinement", message, (wrong.name,), program)
        _record(result, None, seen, finding, config, 0)
    assert len(result.findings) == 1 and result.more_like == [1] and result.duplicates == 1


def test_written_files_are_readable_by_others_under_the_usual_umask(tmp_path):
    previous = os.umask(0o022)
    try:
        path = tmp_path / "finding.agx"
        write_atomically(path, "text\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_pass_dropping_terminators_is_one_finding_whatever_the_last_instruction(tmp_path):
    module = tmp_path / "drop.py"
    module.write_text(
        "def drop(fn):\n    fn.blocks[0].instructions.pop()\n    return True\n"
    )
    dropper = python_pass(f"{module}:drop")
    config = CampaignConfig(seed=1, pipelines=[[dropper]], reduce_seconds=0)
    result = CampaignResult(Stats(), 0.0)
    seen: set[str] = set()
    for opcode in ("mov_imm value=0x1", "get_sr sr=thread_id"):
        program = f"func @f() {{\nb0:\n  %a:32 = {opcode}\n  stop\n}}\n"
        message = f"b0: block does not end in a terminator (its last instruction is {opcode.split()[0]})"
        _record(result, None, seen, Finding(dropper.name, "verifier", message, (dropper.name,), program),
                config, 0)
    assert len(result.findings) == 1 and result.more_like == [1]
