"""A --pass-cmd that times out is killed with everything it started."""

import time

import pytest

from agxir.text import parse_function
from fuzz.passes_under_test import PassFailed, command_pass

PROGRAM = "func @f() {\nb0:\n  stop\n}\n"


def test_a_timed_out_command_and_its_children_are_killed(tmp_path):
    marker = tmp_path / "child.pid"
    script = tmp_path / "slow.sh"
    script.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {marker}\nwait\n")
    script.chmod(0o755)
    slow = command_pass(str(script), timeout=1.0)
    with pytest.raises(PassFailed, match="did not finish within 1 s"):
        slow.run(parse_function(PROGRAM))
    child = int(marker.read_text())
    # Killed with its process group (at most a zombie now); the kernel takes what it takes.
    deadline = time.monotonic() + 600  # only a child that was never killed gets near it
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
