"""Never a false green: a pass that exits or takes its worker down is a finding, the run
exits non-zero, and a replacement worker carries on that worker's share."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

KILLERS = """\
import os


def raises_system_exit(fn):
    raise SystemExit(5)


def kills_its_process(fn):
    if sum(len(b.instructions) for b in fn.blocks) > 45:
        os._exit(3)
    return False
"""


def _run(tmp_path, attribute: str, *extra: str) -> subprocess.CompletedProcess:
    killers = tmp_path / "killers.py"
    killers.write_text(KILLERS)
    return subprocess.run(
        [sys.executable, "-m", "fuzz", "run", "--examples", "12", "--seed", "3", "--jobs", "2",
         *extra, "--pass", f"{killers}:{attribute}", "--out", str(tmp_path / "f")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )


def test_a_pass_raising_system_exit_is_a_crash_finding(tmp_path):
    result = _run(tmp_path, "raises_system_exit", "--no-reduce")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "crash: SystemExit: 5" in result.stdout
    assert "programs checked: 12" in result.stdout


def test_a_pass_that_kills_its_worker_is_reported_and_the_share_is_carried_on(tmp_path):
    result = _run(tmp_path, "kills_its_process", "--no-reduce")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the pass took its process down (exited with status 3)" in result.stdout
    # Every program is accounted for: checked, or the one that took a worker down.
    checked = int(result.stdout.split("programs checked: ")[1].split()[0])
    deaths = result.stdout.count("took its process down") + int(
        result.stdout.split("findings: 1 (")[1].split()[0]
    )
    assert checked + deaths == 12, result.stdout


def test_a_deadly_pass_is_never_rerun_in_the_campaigns_own_process(tmp_path):
    """Reduction and deduplication run passes in the parent: not for this one."""
    result = _run(tmp_path, "kills_its_process")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the pass took its process down" in result.stdout


def test_a_pass_over_its_memory_limit_is_a_finding_and_counted(tmp_path):
    killers = tmp_path / "hog.py"
    killers.write_text("def hog(fn):\n    bytearray(3 << 30)\n    return False\n")
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "run", "--examples", "4", "--seed", "3", "--jobs", "2",
         "--no-reduce", "--pass-memory", "1024", "--pass", f"{killers}:hog",
         "--out", str(tmp_path / "f")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "hog: memory-limit: the pass went past its memory limit of 1024 MB" in result.stdout
    assert "pass memory limit hit: 4 times (--pass-memory)" in result.stdout
