"""Ctrl-C prints a summary and writes the reports; SIGKILL of the campaign leaves no
worker behind; a pass over its memory limit is a finding and the summary says so."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _start(tmp_path, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "fuzz", "run", "--time", "60", "--seed", "1", "--jobs", "2",
         "--out", str(tmp_path / "f"), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


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
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_ctrl_c_prints_a_summary_writes_the_report_and_is_not_green(tmp_path):
    report = tmp_path / "report.json"
    process = _start(tmp_path, "--json-report", str(report))
    time.sleep(6)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    assert "interrupted (Ctrl-C)" in stdout and "programs checked:" in stdout
    assert json.loads(report.read_text())["programs"] > 0


def test_killing_the_campaign_kills_its_workers(tmp_path):
    process = _start(tmp_path)
    time.sleep(4)
    workers = _workers_of(process.pid)
    assert workers
    process.kill()
    process.communicate(timeout=30)
    time.sleep(1)
    assert not [pid for pid in workers if _alive(pid)]
