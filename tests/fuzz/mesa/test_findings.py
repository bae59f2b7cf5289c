"""The triaged findings against Mesa 23.3.6 (docs/mesa-findings.md), each planted and
reported by the oracle that found it in the campaigns, with the message it gave there.

Each Mesa bug here is in 23.3.6 and fixed in later Mesa, so on another tree the same
program must come through clean instead (the test says which). The convert-immediate
disagreement was the model's: Mesa's output now passes the verifier and refinement
(tests/regressions/convert_immediate.agx holds the model's side).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agxir.text import parse_function, print_function
from fuzz.cli import main
from fuzz.harness import Harness
from fuzz.passes_under_test import registered
from oracles.inputs import InputSet

ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class MesaBug:
    """A Mesa 23.3.6 bug as the campaigns report it: the reduced program, the pipeline, and
    the finding it gives (pass, oracle and message)."""

    name: str
    program: str
    passes: tuple[str, ...]
    pass_name: str
    oracle: str
    message: str


# agx_optimizer_backward counts uses in reverse program order and never sees a loop phi's
# read of a value defined later in the loop, so the fmul looks single-use, is fused into its
# fmov-like use (fadd x, -0.0), and the phi reads a value nothing defines (agx_validate).
# Fixed later: the backward pass records successors' phi sources first (test FsatWithPhi).
BACKWARD_PHI = """\
func @backward_phi() {
b0:
  %t:32 = get_sr sr=thread_id
  jump -> b1
b1:
  %p:32 = phi [%t, b0], [%m, b1]
  %m:32 = fmul #0.0, #0.0
  %f:32 = fadd %m, #-0.0
  if_icmp #0, #0 cond=ueq inv=0 -> b2, b1
b2:
  stop
}
"""

# The same through agx_compile.c's whole order (agx_dce first, so the fmov's result must be
# read): reduced from the campaign of seed 2.
BACKWARD_PHI_BACKEND = """\
func @backward_phi_backend() {
b1:
  %27:32 = icmp #0, #0 cond=ueq inv=0
  jump -> b3
b3:
  %6:32 = phi [%27, b1], [%58, b3]
  %58:32 = fadd %6, #0.0
  %59:32 = fadd %58, #-0.0
  export %59 slot=0
  if_icmp #0, #0 cond=ueq inv=0 -> b10, b3
b10:
  stop
}
"""

# fcmp is not is_float in 23.3.6, so agx_optimizer_inline_imm inlines a mov_imm of < 256 as
# an integer immediate, which fcmp reads as an 8-bit minifloat: the f16 subnormal 0x81
# (> 0) becomes -0.015625 (< 0). Fixed later: agx_is_float_src counts fcmp's first two
# sources as float, so only a minifloat-exact value is inlined, as a float.
FCMP_INLINE_IMM = """\
func @fcmp_inline_imm() {
b0:
  %a:16 = mov_imm value=0x81
  %c:32 = fcmp %a, #0.0 cond=gt inv=0
  export %c slot=0
  stop
}
"""

BUGS = (
    MesaBug("optimizer-backward-phi", BACKWARD_PHI, ("lower-cf", "mesa:optimizer"),
            "mesa:optimizer", "crash", "MesaCrash: Mesa exit 1: Invalid vectors after optimizer"),
    MesaBug("optimizer-backward-phi-backend", BACKWARD_PHI_BACKEND, ("lower-cf", "mesa:backend"),
            "mesa:backend", "crash", "MesaCrash: Mesa exit 1: Invalid vectors after optimizer"),
    MesaBug("fcmp-inline-imm", FCMP_INLINE_IMM, ("lower-cf", "mesa:optimizer"),
            "mesa:optimizer", "refinement", "thread 0 output slot 0: input 0x1, output 0x0"),
    MesaBug("fcmp-inline-imm-backend", FCMP_INLINE_IMM, ("lower-cf", "mesa:backend"),
            "mesa:backend", "refinement", "thread 0 output slot 0: input 0x1, output 0x0"),
)


def _findings(program: str, passes: tuple[str, ...]):
    harness = Harness([InputSet(threads=1), InputSet(threads=4)])
    return harness.check(parse_function(program), [[registered(name) for name in passes]])


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.name)
def test_a_mesa_bug_is_found_by_its_oracle(bug: MesaBug, bridge):
    found = [(f.pass_name, f.oracle, f.message) for f in _findings(bug.program, bug.passes)]
    if bridge.version == "23.3.6":
        assert (bug.pass_name, bug.oracle, bug.message) in found, found
    else:  # fixed in later Mesa: the same program comes through clean
        assert found == [], found


def test_the_fcmp_finding_is_mesa_reading_an_integer_as_a_minifloat(bridge):
    """What Mesa made of it: the f16 0x81 inlined as the minifloat 0x81, -0.015625."""
    fn = parse_function(FCMP_INLINE_IMM)
    registered("lower-cf").run(fn)
    registered("mesa:optimizer").run(fn)
    text = print_function(fn)
    if bridge.version == "23.3.6":
        assert "fcmp #-0.015625, #0.0 cond=gt" in text, text
    else:
        assert "fcmp %a" in text, text


def test_the_64_bit_immediate_copy_is_found_by_the_copy_checker(bridge, capsys):
    """Latent in 23.3.6 (agx_ra never copies a 64-bit immediate): the golden is the
    reproducer (tests/fuzz/mesa/test_passes.py has the same check; here it is in the list)."""
    path = ROOT / "tests" / "golden" / "machine" / "lower_copies_Immediate64.agx"
    status = main(["check", str(path), "--passes", "mesa:lower-copies", "--seed", "1"])
    out = capsys.readouterr().out
    if bridge.version == "23.3.6":
        assert status == 1
        assert "mesa:lower-copies: copy-checker:" in out
    else:
        assert status == 0, out


CONVERT_IMMEDIATES = """\
func @convert_imm() {
b0:
  %a:16 = mov_imm value=0x0
  %b:32 = convert %a mode=u2f
  export %b slot=0
  %c:32 = mov_imm value=0xc8
  %d:32 = convert %c mode=s2f
  export %d slot=1
  %e:32 = mov_imm value=0x5
  %f:32 = convert %e mode=f2s
  export %f slot=2
  stop
}
"""


@pytest.mark.parametrize("pipeline", ["mesa:optimizer", "mesa:backend"])
def test_mesa_inlines_immediates_into_convert_and_the_model_agrees(pipeline):
    """The disagreement the campaigns found (the verifier rejected `convert #0`) was the
    model's: Mesa's output is now valid and computes what the program did."""
    fn = parse_function(CONVERT_IMMEDIATES)
    registered("lower-cf").run(fn)
    registered(pipeline).run(fn)
    text = print_function(fn)
    assert "convert #200 mode=s2f" in text and "convert #5 mode=f2s" in text, text
    assert _findings(CONVERT_IMMEDIATES, ("lower-cf", pipeline)) == []
