"""`agxfuzz opt --stats` says why it has no stats line for a vreg-level result (virtual
registers: neither Mesa's demand nor an allocation to count), instead of a misleading one."""

from pathlib import Path

from fuzz.cli import main

SAXPY = Path(__file__).resolve().parents[3] / "examples" / "saxpy.agx"


def _stats_line(capsys, passes: str) -> str:
    assert main(["opt", str(SAXPY), "-p", passes, "--stats"]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines()
              if line.startswith("; stats: ")]
    return line


def test_a_vreg_result_has_no_stats_and_says_why(capsys):
    assert _stats_line(capsys, "lower-cf,out-of-ssa") == (
        "; stats: none: --stats needs an allocated (machine-level) result or an SSA or exec "
        "one (Mesa's demand); this pipeline ends at level vreg")


def test_after_the_vreg_allocator_the_stats_are_back(capsys):
    line = _stats_line(capsys, "lower-cf,out-of-ssa,vreg-ra")
    assert line.startswith("; stats: ") and "halfregs" in line
