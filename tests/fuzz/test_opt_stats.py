"""`agxfuzz opt FILE -p PASSES --stats`: Mesa's stats line for the result, at every level of
the machine pipeline, equal to agxir.machine.pressure.machine_stats of what is printed."""

from pathlib import Path

from agxir.ir import Register
from agxir.machine.pressure import machine_stats
from agxir.text import parse_function
from fuzz.cli import main
from oracles.machine.pressure_oracle import reference_mesa_demand

# Two phis swapped around a loop: whatever the allocator picks, a copy (a cycle) is left.
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "phi_swap_parallel.agx"


def _opt(capsys, passes: str, *flags: str) -> tuple[int, list[str], str]:
    status = main(["opt", str(GOLDEN), "-p", passes, *flags])
    out = capsys.readouterr().out
    return status, out.splitlines(), out


def _printed_function(lines: list[str]):
    return parse_function("\n".join(line for line in lines if not line.startswith(";")) + "\n")


def test_the_stats_line_describes_the_printed_result_at_each_step(capsys):
    steps = ["dce", "lower-cf", "lower-cf,ra", "lower-cf,ra,lower-phis",
             "lower-cf,ra,lower-phis,lower-copies"]
    printed = {}
    for passes in steps:
        status, lines, _ = _opt(capsys, passes, "--stats")
        assert status == 0
        (stats,) = [line for line in lines if line.startswith("; stats: ")]
        fn = _printed_function(lines)
        assert stats == f"; stats: {machine_stats(fn).line()}"
        instrs, halfregs, threads, copies = (int(part.split()[0]) for part in stats[9:].split(", "))
        assert instrs == fn.instruction_count()
        printed[passes] = (fn, halfregs, threads, copies)
    fn, halfregs, threads, copies = printed["lower-cf"]
    # Before allocation: Mesa's demand, from the reference liveness (r0l reserved).
    assert halfregs == reference_mesa_demand(fn) and threads == 1024 and copies == 0
    for passes in steps[2:]:
        fn, halfregs, threads, copies = printed[passes]
        highest = max(h for ins in fn.instructions()
                      for ref in [s.ref for s in ins.srcs] + ins.defs()
                      if isinstance(ref, Register) for h in ref.halves)
        assert halfregs == highest + 1  # nr_gprs
    fn, _, _, copies = printed["lower-cf,ra,lower-phis"]
    assert copies == sum(1 for ins in fn.instructions() if ins.name == "parallel_copy") > 0
    fn, _, _, copies = printed["lower-cf,ra,lower-phis,lower-copies"]
    assert copies == sum(1 for ins in fn.instructions() if ins.name == "bitop") > 0


def test_no_stats_line_without_the_flag(capsys):
    status, lines, _ = _opt(capsys, "lower-cf,ra")
    assert status == 0
    assert not any(line.startswith("; stats:") for line in lines)
