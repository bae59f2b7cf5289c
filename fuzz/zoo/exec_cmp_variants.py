"""The bug zoo's `fuse-exec-cmp` variants (seed 003, LLVM D119696): each is the right pass
(`agxir.machine.fuse_exec_cmp`) with one of the review's checks switched off, exposed as a
`Pass` named `zoo-fuse-exec-cmp-...`, as a module-level callable (`--pass
fuzz.zoo.exec_cmp_variants:NAME`, what replay commands name) and as a `Variant` declared
`of="fuse-exec-cmp"`, so run after the machine pipeline, its place.

1. `fuse-exec-cmp-across-exec-write`: an r0l write between the compare and the branch is
   not looked for (Eli Friedman: "There shouldn't be any EXEC modifications between those
   two instructions"; tsymalla's wqm.ll sequence with `s_and_b32 exec_lo` between). No
   program that comes from SSA through the machine pipeline has one, so no campaign can
   catch this one either (it is in `UNREACHABLE`, with a hand-written test): the variant
   keeps the walk inside the branch's block, and there r0l is written only by lower-cf's
   rows, which sit at block boundaries. `begin_cf` is the entry block's first
   instruction, before any compare; an if's or a loop's branch (`if_*cmp`, `while_*cmp`)
   ends the block that held the SSA branch, after everything the generator emitted
   there; `else_*cmp`, `push_exec`, `break`, `pop_exec` and `jmp_exec_any` go into fresh
   blocks (else, preheader, break, cont) or at the end of a block whose SSA terminator
   was a jump (the end of an if side, a latch), so never before a branch in its block.
   RA reserves r0l under control flow (a branch implies it) and the verifier rejects any
   other write of it or of a register overlapping it; phi and parallel copies write
   allocated registers only, and land before a block's trailing control flow. Only a
   pass running between lower-cf and this one that moved an exec row (or a select into
   r0l, Mesa's break_if lowering) would make it reachable; MACHINE_PIPELINE has none.
2. `fuse-exec-cmp-at-compare`: the fused branch goes where the compare was (the first
   revision; Sebastian Neubauer: "Otherwise this v_mov gets executed with the wrong exec
   mask").
3. `fuse-exec-cmp-source-redefined`: a source register of the compare written between is
   not looked for (tsymalla: "a copy needs to be inserted whenever a v_cmp register source
   operand gets redefined inbetween").
4. `fuse-exec-cmp-overlapping-half-redefined`: only a write of the very same register
   counts; a write of one half of it, or of a 64-bit register containing it, does not
   (Carl Ritson: "modifiesRegister must be passed TRI otherwise subregisters will not be
   checked").
5. `fuse-exec-cmp-result-read-later`: the compare is deleted though its result is read
   between or after the branch (Sebastian Neubauer: "do you make sure that the v_cmp is not
   used anywhere outside the s_saveexec?").
6. `fuse-exec-cmp-result-overlaps-exec`: a compare writing r0l is fused and deleted (Carl
   Ritson's test of a v_cmp source inside the saved exec mask). Valid machine programs
   never have it (RA reserves r0l under control flow and the verifier rejects a compare
   writing it), so no campaign can catch this one: it is here for the hand-written test.
7. `fuse-exec-cmp-unbounded-walk`: the backward walk has no bound and goes on into the
   blocks laid out before (Eli Friedman: "If the V_CMP appears much earlier in the code
   (perhaps even in a different basic block!) then we shouldn't do the transform").
8. `fuse-exec-cmp-nearest-compare`: the nearest compare is fused whether or not it writes
   the register the branch tests (Jay Foad: "The code just finds the last v_cmp
   instruction. Then you hope that it defs the saveexec input operand?").
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.machine.fuse_exec_cmp import FuseExecCmp, fuse_exec_cmp
from agxir.passes.pass_ import Pass
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.exec_cmp_variants"


class AcrossExecWrite(FuseExecCmp):
    CHECK_EXEC_WRITES = False


class AtCompare(FuseExecCmp):
    AT_BRANCH = False


class SourceRedefined(FuseExecCmp):
    CHECK_SOURCES = False


class OverlappingHalfRedefined(FuseExecCmp):
    OVERLAP = False


class ResultReadLater(FuseExecCmp):
    CHECK_RESULT_DEAD = False


class ResultOverlapsExec(FuseExecCmp):
    CHECK_RESULT_EXEC = False


class UnboundedWalk(FuseExecCmp):
    WINDOW = None
    CROSS_BLOCKS = True


class NearestCompare(FuseExecCmp):
    CHECK_TESTED = False


def across_exec_write(fn: Function) -> bool:
    return fuse_exec_cmp(fn, AcrossExecWrite)


def at_compare(fn: Function) -> bool:
    return fuse_exec_cmp(fn, AtCompare)


def source_redefined(fn: Function) -> bool:
    return fuse_exec_cmp(fn, SourceRedefined)


def overlapping_half_redefined(fn: Function) -> bool:
    return fuse_exec_cmp(fn, OverlappingHalfRedefined)


def result_read_later(fn: Function) -> bool:
    return fuse_exec_cmp(fn, ResultReadLater)


def result_overlaps_exec(fn: Function) -> bool:
    return fuse_exec_cmp(fn, ResultOverlapsExec)


def unbounded_walk(fn: Function) -> bool:
    return fuse_exec_cmp(fn, UnboundedWalk)


def nearest_compare(fn: Function) -> bool:
    return fuse_exec_cmp(fn, NearestCompare)


# (variant name, callable, origin, description)
_TABLE = (
    ("across-exec-write", across_exec_write, "seed 003 (D119696, Eli Friedman)",
     "fuses across an r0l write between the compare and the branch"),
    ("at-compare", at_compare, "seed 003 (D119696, Sebastian Neubauer)",
     "puts the fused branch at the compare, so the instructions between run under the new mask"),
    ("source-redefined", source_redefined, "seed 003 (D119696, tsymalla)",
     "fuses though a source of the compare is written between"),
    ("overlapping-half-redefined", overlapping_half_redefined, "seed 003 (D119696, Carl Ritson)",
     "sees a source written between only when the very same register is written"),
    ("result-read-later", result_read_later, "seed 003 (D119696, Sebastian Neubauer)",
     "deletes the compare though its result is read later"),
    ("result-overlaps-exec", result_overlaps_exec, "seed 003 (D119696, Carl Ritson)",
     "fuses a compare whose result overlaps r0l"),
    ("unbounded-walk", unbounded_walk, "seed 003 (D119696, Jay Foad, Eli Friedman)",
     "walks back without a bound, into earlier blocks"),
    ("nearest-compare", nearest_compare, "seed 003 (D119696, Jay Foad)",
     "fuses the nearest compare whether or not it writes the tested register"),
)  # fmt: skip

PASSES: tuple[Pass, ...] = tuple(
    Pass(f"zoo-fuse-exec-cmp-{name}", f"fuse-exec-cmp that {description}", function)
    for name, function, _, description in _TABLE
)


def _unit(function) -> callable:
    name = f"zoo-fuse-exec-cmp-{function.__name__.replace('_', '-')}"
    return lambda: PassUnderTest(name, function, ("--pass", f"{MODULE}:{function.__name__}"))


# The variants no program from SSA through MACHINE_PIPELINE can expose (see above): tested
# on hand-written machine programs only.
_UNREACHABLE_NAMES = ("across-exec-write", "result-overlaps-exec")
VARIANTS: tuple[Variant, ...] = tuple(
    Variant(f"fuse-exec-cmp-{name}", origin, description, _unit(function), of="fuse-exec-cmp")
    for name, function, origin, description in _TABLE
    if name not in _UNREACHABLE_NAMES
)
UNREACHABLE: tuple[Variant, ...] = tuple(
    Variant(f"fuse-exec-cmp-{name}", origin, description, _unit(function), of="fuse-exec-cmp")
    for name, function, origin, description in _TABLE
    if name in _UNREACHABLE_NAMES
)
