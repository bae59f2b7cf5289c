"""Mesa's passes under the harness: which oracles judge which step, what a Mesa crash
looks like as a finding, and `check` over Mesa's pipelines."""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.ir import clone_function
from agxir.text import parse_function, print_function
from fuzz.cli import main
from fuzz.mesa.passes import MESA_PASSES, mesa_prefix
from fuzz.passes_under_test import registered
from fuzz.step_oracles import STEP_ORACLES, Step

ROOT = Path(__file__).resolve().parents[3]
SAXPY = ROOT / "examples" / "saxpy.agx"
PREFIX_SUM = ROOT / "examples" / "prefix_sum.agx"
# Reduced from a campaign over Mesa 23.3.6: agx_optimizer's backward pass fuses the fmul
# into its one fmov-like use (fadd x, -0.0) though a loop phi reads the fmul's value too,
# leaving the phi reading a value nothing defines; agx_validate then stops the compile.
FMOV_PHI = """\
func @fmov_phi() {
b5:
  %24:32 = get_sr sr=thread_id
  jump -> b7
b7:
  %8:32 = phi [%24, b5], [%35, b7]
  %35:32 = fmul #0.0, #0.0
  %36:32 = fadd %35, #-0.0
  if_icmp #0, #0 cond=ueq inv=0 -> b10, b7
b10:
  stop
}
"""


def _steps(path: Path, names: list[str]) -> list[Step]:
    source = parse_function(path.read_text(), str(path))
    source_text = print_function(source)
    current, steps = source, []
    for name in names:
        work = clone_function(current)
        unit = registered(name)
        unit.run(work)
        steps.append(Step(name, current, print_function(current), work, print_function(work),
                          source, source_text, unit.contract))
        current = work
    return steps


def _applying(step: Step) -> set[str]:
    return {oracle.name for oracle in STEP_ORACLES if oracle.applies(_Harness(), step)}


class _Harness:
    check_liveness = True
    tv_threads = 0
    promotion_ms = 0


def test_the_allocation_checkers_judge_mesa_ra_and_refinement_judges_everything():
    lower, dce, ra, copies, pseudo = _steps(PREFIX_SUM, mesa_prefix("mesa:lower-pseudo"))
    assert {"verifier", "refinement"} <= _applying(lower)
    assert {"ra-checker", "demand", "refinement", "verifier"} <= _applying(ra)
    assert "parallel_copy" in ra.after_text  # Mesa's copies, kept for the checker
    assert "parallel_copy" not in copies.after_text
    assert {"refinement", "verifier"} <= _applying(copies)
    assert {"refinement", "verifier"} <= _applying(pseudo)
    assert ra.after.notes["demand"] > 0 and ra.after.notes["bound"] >= 8


def test_the_whole_backend_is_judged_by_refinement_not_the_allocation_checkers():
    (lower, backend) = _steps(SAXPY, ["lower-cf", "mesa:backend"])
    applying = _applying(backend)
    assert "refinement" in applying
    assert not {"ra-checker", "demand"} & applying


@pytest.mark.parametrize("name", sorted(MESA_PASSES))
def test_check_runs_each_mesa_pipeline_clean_on_the_examples(name, capsys):
    passes = ",".join(mesa_prefix(f"mesa:{name}"))
    assert main(["check", str(PREFIX_SUM), "--passes", passes, "--seed", "1"]) == 0
    assert "every oracle agrees" in capsys.readouterr().out


def test_a_mesa_failure_is_a_crash_finding_with_its_text(tmp_path, capsys):
    program = tmp_path / "fmov_phi.agx"
    program.write_text(FMOV_PHI)
    assert main(["check", str(program), "--passes", "lower-cf,mesa:optimizer",
                 "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "mesa:optimizer: crash: MesaCrash: Mesa exit 1: Invalid vectors after optimizer" in out


def test_a_program_mesa_cannot_take_is_declined_and_counted(capsys):
    from fuzz.harness import Harness
    from oracles.inputs import InputSet

    fn = parse_function(
        "func @f(u0:32) {\nb0:\n  %a:32 = imul u0, u0\n  export %a slot=0\n  stop\n}\n"
    )
    harness = Harness([InputSet(threads=1, scalars={"u0": 3})])
    findings = harness.check(fn, [[registered("lower-cf"), registered("mesa:optimizer")]])
    assert findings == []
    assert harness.stats.not_translatable == 1
    assert harness.stats.not_translatable_opcodes == {"imul": 1}


def test_a_mesa_hang_is_a_timeout_finding(monkeypatch):
    """The bridge's `spin` pass never ends: the harness's deadline interrupts the request
    (a timeout finding, as for any pass), the client restarts the bridge, and the next
    program is served."""
    from fuzz.harness import Harness
    from fuzz.mesa import passes
    from oracles.inputs import InputSet

    monkeypatch.setitem(passes.MESA_PASSES, "spin", ("spin",))
    fn = parse_function(SAXPY.read_text(), str(SAXPY))
    harness = Harness([InputSet(threads=4)], pass_timeout=1)
    findings = harness.check(fn, [[registered("lower-cf"), passes.mesa_pass("mesa:spin")]])
    assert [(f.pass_name, f.oracle) for f in findings] == [("mesa:spin", "timeout")]
    assert findings[0].message == "the pass ran longer than 1 s"
    again = harness.check(fn, [[registered("lower-cf"), registered("mesa:optimizer")]])
    assert again == []


MACHINE = ROOT / "tests" / "golden" / "machine"


@pytest.mark.parametrize("case", ["Swap", "Cycle3", "TwoSwaps", "ManyDependentCopies",
                                  "VectorizeAlignedHalfRegs", "64bit_overlap"])
def test_the_copy_checker_reads_mesas_sequentializer(case, capsys):
    """Mesa's swaps (three xors, or one `extr r, r, r, #16` for a register's halves) are
    what the copy checker reads."""
    path = MACHINE / f"lower_copies_{case}.agx"
    assert main(["check", str(path), "--passes", "mesa:lower-copies", "--seed", "1"]) == 0
    assert "every oracle agrees" in capsys.readouterr().out


def test_mesa_23_3_6_splits_a_64_bit_immediate_copy_wrong(bridge, capsys):
    """agx_emit_parallel_copies of 23.3.6 copies `d2 = #10` as r2 = 10, r3 = 12 (the split
    adds 2 to the source, right for a register only; later Mesa has Immediate64 for it):
    the copy checker says so. On another Mesa tree this documents the finding instead."""
    path = MACHINE / "lower_copies_Immediate64.agx"
    status = main(["check", str(path), "--passes", "mesa:lower-copies", "--seed", "1"])
    out = capsys.readouterr().out
    if bridge.version == "23.3.6":
        assert status == 1
        assert "mesa:lower-copies: copy-checker: in b0, `export d2 slot=0` does not read" in out
    else:  # a Mesa with the fix copies it right
        assert status == 0, out


def test_mesas_liveness_is_compared_with_the_reference(client):
    """agx_compute_liveness's sets agree with the reference on a loop; one value taken out
    of a live-out set is reported by block and name."""
    from fuzz.mesa.client import run_passes
    from fuzz.mesa.passes import reference_difference

    fn = parse_function(PREFIX_SUM.read_text(), str(PREFIX_SUM))
    registered("lower-cf").run(fn)
    liveness = run_passes(client, fn, ["liveness"]).liveness
    assert reference_difference(fn, liveness) is None
    block, values = next((b, v) for b, v in liveness.live_out.items() if v)
    dropped = values.pop()
    assert reference_difference(fn, liveness) == (
        f"Mesa's live_out[{block}] lacks %{dropped}")
