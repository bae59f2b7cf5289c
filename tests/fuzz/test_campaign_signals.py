"""Ctrl-C (and a CI's SIGTERM) prints a summary and writes the reports, even in a run started
with SIGINT ignored; SIGKILL of the campaign leaves no worker behind.

Nothing here depends on timing: each signal is sent after the run has printed a progress
line counting at least one checked program, and the run's program budget is far beyond what
it could finish by itself. The time limits below only keep a broken run from hanging CI."""

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD = 600  # seconds: only a broken run gets near it, whatever the machine's load
BUDGET = 1_000_000  # programs: no run checks this many before its signal arrives
PROGRESS = re.compile(r"^\[\s*\d+ s\] (\d+) programs")


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as pytest-xdist and some CI runners do


def _start(tmp_path, *args, sigint_ignored=False):
    return subprocess.Popen(
        [sys.executable, "-m", "fuzz", "run", "--examples", str(BUDGET), "--seed", "1",
         "--jobs", "2", "--out", str(tmp_path / "f"), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ignore_sigint if sigint_ignored else None,
    )


def _wait_for_checked_programs(process) -> list[str]:
    """The run's output up to its first progress line counting a checked program: by then
    its signal handlers are installed and its workers running."""
    lines = []
    guard = threading.Timer(HANG_GUARD, process.kill)  # a broken run ends the readline
    guard.start()
    try:
        for line in process.stdout:
            lines.append(line)
            match = PROGRESS.match(line)
            if match and int(match.group(1)) > 0:
                return lines
    finally:
        guard.cancel()
    process.kill()
    _, stderr = process.communicate()
    pytest.fail("no progress line counting a checked program:\n" + "".join(lines) + stderr)


def _finish(process) -> tuple[str, str]:
    """The rest of the run's output once it has ended (killed if it never does)."""
    try:
        return process.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"the run did not end within {HANG_GUARD} s of its signal:\n{stdout}{stderr}")


def _workers_of(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # the parent's pid, after the state field
            children.append(int(stat.parent.name))
    return children


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _stop(tmp_path, number, *, sigint_ignored):
    report = tmp_path / "report.json"
    process = _start(tmp_path, "--json-report", str(report), sigint_ignored=sigint_ignored)
    before = _wait_for_checked_programs(process)
    process.send_signal(number)
    stdout, stderr = _finish(process)
    return process.returncode, "".join(before) + stdout, stderr, report


@pytest.mark.parametrize("sigint_ignored", [False, True], ids=["sigint-default", "sigint-ignored"])
def test_ctrl_c_prints_a_summary_writes_the_report_and_is_not_green(tmp_path, sigint_ignored):
    status, stdout, stderr, report = _stop(tmp_path, signal.SIGINT, sigint_ignored=sigint_ignored)
    assert status == 130, stdout + stderr
    assert "Traceback" not in stderr
    assert "interrupted (Ctrl-C)" in stdout and "programs checked:" in stdout
    written = json.loads(report.read_text())
    assert written["interrupted"] is True
    assert 0 < written["programs"] < BUDGET


def test_sigterm_ends_the_run_with_its_summary_too(tmp_path):
    """A CI's cancel (SIGTERM) is an interruption like Ctrl-C: summary, reports, exit 130."""
    status, stdout, stderr, report = _stop(tmp_path, signal.SIGTERM, sigint_ignored=True)
    assert status == 130, stdout + stderr
    assert "Traceback" not in stderr
    assert "interrupted (SIGTERM)" in stdout and "programs checked:" in stdout
    assert 0 < json.loads(report.read_text())["programs"] < BUDGET


def test_killing_the_campaign_kills_its_workers(tmp_path):
    process = _start(tmp_path)
    _wait_for_checked_programs(process)
    workers = _workers_of(process.pid)
    assert workers
    process.kill()
    _finish(process)
    # The kernel signals them as their parent dies; reaping them takes as long as it takes.
    deadline = time.monotonic() + HANG_GUARD
    while [pid for pid in workers if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)]
