"""`agxfuzz opt` runs the machine passes and prints Mesa's stats line."""

import subprocess
import sys


def _opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzz", "opt", *args],
                          capture_output=True, text=True, timeout=600)


def test_opt_lowers_to_registers_and_prints_the_stats_line():
    result = _opt("tests/golden/loop_prefix_sum.agx", "-p",
                  "lower-cf,ra,lower-phis,lower-copies", "--stats")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "; stats: 13 instrs, 8 halfregs, 1024 threads, 1 copies" in lines
    assert any(line.startswith("func.machine @prefix_sum(") for line in lines)
    assert "  jmp_exec_any -> loop" in lines


def test_the_stats_of_an_ssa_function_use_its_liveness_demand():
    result = _opt("tests/golden/loop_prefix_sum.agx", "-p", "dce", "--stats")
    assert result.returncode == 0, result.stderr
    assert any(line.startswith("; stats: ") and "halfregs" in line for line in result.stdout.splitlines())
