"""The triaged findings against Mesa 23.3.6 (docs/mesa-findings.md), each planted and
reported by the oracle that found it in the campaigns, with the message it gave there.

Each Mesa bug here is in 23.3.6; all but inline-imm-drops-abs and is-fmov-ignores-modifiers
are fixed in later Mesa.
Each has a fix for 23.3.6 as a patch (fuzz/mesa/fixes/NAME.patch: later Mesa's fix
backported, or for the other two our own), applied to a copy by build_bridge(patches=), as
the zoo's wrong variants are: with it, and with no other change, the program comes
through clean, which is what says the finding is that bug. With all of them (what
`run --mesa --with-fixes` builds) every program here is clean. The convert-immediate disagreement was the model's: Mesa's output now passes the
verifier and refinement (tests/regressions/convert_immediate.agx holds the model's side).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from agxir.text import parse_function, print_function
from fuzz.harness import Harness
from fuzz.passes_under_test import registered
from oracles.inputs import InputSet

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = ROOT / "fuzz" / "mesa" / "fixes"
IMMEDIATE64 = ROOT / "tests" / "golden" / "machine" / "lower_copies_Immediate64.agx"


@dataclass(frozen=True)
class MesaBug:
    """A Mesa 23.3.6 bug as the campaigns report it: the reduced program, the pipeline, and
    the finding it gives (pass, oracle and message)."""

    name: str
    program: str
    passes: tuple[str, ...]
    pass_name: str
    oracle: str
    message: str  # the finding's message holds this (a crash's names the tree's path first)
    fix: str | None  # fuzz/mesa/fixes/FIX.patch: the later fix backported, or our own


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

# agx_optimizer_inline_imm skips a source with .neg but not one with .abs, and replaces
# the operand whole, so the .abs is lost: |-1.0| + 1.0 becomes -1.0 + 1.0. Masked in plain
# 23.3.6 campaigns by the fcmp bug's signature; found with the fixes above. The newest
# agx_optimizer.c the search index holds has the same code: not known to be fixed.
INLINE_IMM_ABS = """\
func @inline_imm_drops_abs() {
b0:
  %a:16 = mov_imm value=0xbc00
  %b:16 = fadd %a.abs, #1.0
  export %b slot=0
  stop
}
"""

# agx_is_fmov takes `fadd x, -0.0` for an fmov comparing the immediate by type and value
# only (agx_is_equiv), so `fadd x, #-0.0.abs` (x + 0.0) is folded into x's use like an fmov
# and -0.0 comes out where x + 0.0 gives +0.0. Found by `agxfuzz mesa agree` (the fmov-rev
# "Mesa only" class); not known to be fixed.
IS_FMOV_MODIFIERS = """\
func @is_fmov_ignores_modifiers(u0:32) {
b0:
  %z:32 = fmul u0, #1.0
  %r:32 = fadd %z, #-0.0.abs
  export %r slot=0
  stop
}
"""

# agx_ra's live-range splitting (assign_regs_by_copying) has `unreachable("TODO")` for a
# phi destination: a loop whose phis meet a fragmented register file at a demand of 93
# halves (of 256) aborts Mesa. Found by `run --mesa --with-fixes` seed 6 (once in 8,194
# programs), reduced from 117 instructions. Fixed in later Mesa (find_regs moves the
# shuffle before the phis, agx_emit_move_before_phi); not backported (fix None).
RA_PHI_SPLIT = (Path(__file__).resolve().parent / "programs" / "ra_phi_split_todo.agx").read_text()
RA_TODO = "agx_register_allocate.c:415: assign_regs_by_copying: Assertion `!\"\" \"TODO\"' failed."

INVALID_VECTORS = "MesaCrash: Mesa exit 1: Invalid vectors after optimizer"
OUTPUT_DIFFERS = "thread 0 output slot 0: input 0x1, output 0x0"
BUGS = (
    MesaBug("optimizer-backward-phi", BACKWARD_PHI, ("lower-cf", "mesa:optimizer"),
            "mesa:optimizer", "crash", INVALID_VECTORS, "optimizer-backward-phi"),
    MesaBug("optimizer-backward-phi-backend", BACKWARD_PHI_BACKEND, ("lower-cf", "mesa:backend"),
            "mesa:backend", "crash", INVALID_VECTORS, "optimizer-backward-phi"),
    MesaBug("fcmp-inline-imm", FCMP_INLINE_IMM, ("lower-cf", "mesa:optimizer"),
            "mesa:optimizer", "refinement", OUTPUT_DIFFERS, "fcmp-inline-imm"),
    MesaBug("fcmp-inline-imm-backend", FCMP_INLINE_IMM, ("lower-cf", "mesa:backend"),
            "mesa:backend", "refinement", OUTPUT_DIFFERS, "fcmp-inline-imm"),
    MesaBug("inline-imm-drops-abs", INLINE_IMM_ABS, ("lower-cf", "mesa:optimizer"),
            "mesa:optimizer", "refinement", "thread 0 output slot 0: input 0x4000, output 0x0",
            "inline-imm-keeps-abs"),
    MesaBug("is-fmov-ignores-modifiers", IS_FMOV_MODIFIERS, ("lower-cf", "mesa:optimizer"),
            "mesa:optimizer", "refinement",
            "thread 0 output slot 0: input 0x0, output 0x80000000", "is-fmov-checks-modifiers"),
    MesaBug("ra-phi-split-todo", RA_PHI_SPLIT, ("lower-cf", "mesa:ra"), "mesa:ra", "crash",
            RA_TODO, None),
    # latent in 23.3.6 (agx_ra never copies a 64-bit immediate): the golden is the program
    MesaBug("copies-immediate64", IMMEDIATE64.read_text(), ("mesa:lower-copies",),
            "mesa:lower-copies", "copy-checker", "in b0, `export d2 slot=0` does not read",
            "copies-immediate64"),
)


def _findings(program: str, passes: tuple[str, ...]):
    scalars = {"u0": 0x80000000} if "(u0:32)" in program else {}  # -0.0 for the fmov bug
    harness = Harness([InputSet(threads=1, scalars=scalars), InputSet(threads=4, scalars=scalars)])
    found = harness.check(parse_function(program), [[registered(name) for name in passes]])
    return [(f.pass_name, f.oracle, f.message) for f in found]


def _reports(bug: MesaBug, found) -> bool:
    return any(pass_name == bug.pass_name and oracle == bug.oracle
               and bug.message in message for pass_name, oracle, message in found)


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: bug.name)
def test_a_mesa_bug_is_found_by_its_oracle(bug: MesaBug, bridge):
    found = _findings(bug.program, bug.passes)
    if bridge.version == "23.3.6":
        assert _reports(bug, found), found
    elif bug.fix is None or (UPSTREAM / f"{bug.fix}.patch").read_text().startswith("# Backport"):
        assert found == [], found  # fixed in later Mesa: the same program comes through clean
    else:  # our own fix: later Mesa has the bug still
        assert _reports(bug, found), found


def _fixed_bridge(fix: str):
    from fuzz.mesa.build import build_bridge
    from fuzz.mesa.variants import parse_patch

    path = UPSTREAM / f"{fix}.patch"
    return build_bridge(patches=[parse_patch(fix, path.read_text())])


@pytest.mark.parametrize("bug", [bug for bug in BUGS if bug.fix], ids=lambda bug: bug.name)
def test_the_later_fix_alone_makes_the_finding_go(bug: MesaBug, bridge, monkeypatch):
    """23.3.6 with only the backported fix: the same program through the same pipeline
    comes through clean (the other bugs' programs are not this fix's business)."""
    if bridge.version == "23.3.6":  # the backports are against 23.3.6; later Mesa has them
        monkeypatch.setenv("AGXFUZZ_MESA_BRIDGE", str(_fixed_bridge(bug.fix).path))
    assert _findings(bug.program, bug.passes) == []


def test_every_backported_fix_is_one_of_the_findings():
    fixes = {bug.fix for bug in BUGS if bug.fix}
    assert sorted(p.stem for p in UPSTREAM.glob("*.patch")) == sorted(fixes)


def _backports():
    """The fixes that are later Mesa's (their header says "Backport"), not our own."""
    from fuzz.mesa.variants import parse_patch

    return [parse_patch(p.stem, p.read_text()) for p in sorted(UPSTREAM.glob("*.patch"))
            if p.read_text().startswith("# Backport")]


def test_a_bug_no_later_fix_covers_survives_all_the_backports(bridge, monkeypatch):
    """The .abs inline_imm drops is found on 23.3.6 with every backported fix of later Mesa
    applied: the campaign of seed 5 found it so, once the fcmp bug no longer shared its
    signature. Only our own fix (inline-imm-keeps-abs) makes it go."""
    from fuzz.mesa.build import build_bridge

    (bug,) = [bug for bug in BUGS if bug.name == "inline-imm-drops-abs"]
    if bridge.version == "23.3.6":
        backports = _backports()
        assert {p.name for p in backports} == {"copies-immediate64", "fcmp-inline-imm",
                                               "optimizer-backward-phi"}
        monkeypatch.setenv("AGXFUZZ_MESA_BRIDGE", str(build_bridge(patches=backports).path))
    assert _reports(bug, _findings(bug.program, bug.passes))


def test_with_every_fix_no_finding_program_finds_anything(bridge, monkeypatch):
    """What `run --mesa --with-fixes` builds (fuzz/mesa/fixes, all of them): every triaged
    program comes through clean, so CI's campaign on it hunts for bugs not yet known."""
    from fuzz.mesa.build import build_bridge
    from fuzz.mesa.fixes import all_fixes

    if bridge.version == "23.3.6":
        monkeypatch.setenv("AGXFUZZ_MESA_BRIDGE", str(build_bridge(patches=all_fixes()).path))
    for bug in BUGS:
        if bug.fix is not None:  # ra-phi-split-todo has no backport: later Mesa's is a rewrite
            assert _findings(bug.program, bug.passes) == [], bug.name


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
