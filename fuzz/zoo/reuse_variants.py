"""The bug zoo's `reuse-conversion` variants (seed 002): each is the right pass
(`agxir.machine.reuse_conversion`) with one of the review's checks removed, or, for the
narrow write, the vreg allocator with its rule removed. Each is a `Pass` named `zoo-...`,
a module-level callable (`--pass fuzz.zoo.reuse_variants:NAME`, what replay commands
name) and a `Variant` that runs lower-cf and out-of-ssa before it and vreg-ra and
lower-copies after it.

Caught by a campaign (`VARIANTS`), on generated programs:

1. `reuse-block-local-liveness`: "not read again" means no later instruction of the same
   block reads the source; a read in a later block (or the next iteration) is missed.
2. `reuse-ignores-back-edge`: the source's liveness ignores back edges, so a source defined
   before a loop and converted in it is clobbered for the next iteration.
3. `reuse-misses-phi-copy-reads`: the liveness does not count the reads of out-of-SSA's
   parallel copies (phi sources on an edge), as Mesa's backward pass once missed phi-source
   uses (FsatWithPhi); a source that flows into a phi is clobbered.

Not observable on programs that come from SSA (`HAND_WRITTEN`; each caught by the wave
interpreter on the hand-written vreg program its test names): out-of-SSA gives every
conversion result its own vreg written once and every source a definition that dominates
the conversion, and the pass's only narrow writes are at the source's last read, so:

4. `reuse-renames-every-def` (the historic patch): every def and use of the result's vreg
   is renamed, not only this definition's live range.
5. `reuse-ignores-redefinition`: the source's vreg is written again while the renamed
   result is live.
6. `vreg-ra-narrow-write-kills`: the allocator's liveness ends a vreg at a narrow write to
   it, so the high half, still read, is handed to another vreg.
"""

from __future__ import annotations

from agxir.cfg import CFG
from agxir.ir import Function, VirtualRegister
from agxir.machine import reuse_conversion as rc
from agxir.machine import vreg_alloc
from agxir.passes.pass_ import Pass
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.reuse_variants"


class BlockLocalLiveness(rc.ConversionReuse):
    def source_live_after(self, block, index, source) -> bool:
        return any(source in rc.read_indices(ins) for ins in block.instructions[index + 1:])


class IgnoresBackEdges(rc.ConversionReuse):
    def analyse(self) -> None:
        self.back_edges = set(CFG(self.fn).back_edges)
        super().analyse()

    def successors(self, block):
        return [s for s in block.successors if (block, s) not in self.back_edges]


class MissesPhiCopyReads(rc.ConversionReuse):
    def reads(self, ins):
        return set() if ins.name == "parallel_copy" else super().reads(ins)


class RenamesEveryDef(rc.ConversionReuse):
    """Intel's reuse_16bit_conversions_vgrf: every instruction writing or reading the
    destination vgrf is moved to the source's."""

    def web(self, block, index, result):
        return [(b, i) for b in self.fn.blocks for i, ins in enumerate(b.instructions)
                if result in rc.read_indices(ins)]

    def rename(self, block, index, uses, result, source) -> None:
        super().rename(block, index, uses, result, source)
        narrow = VirtualRegister(source, 16)
        for ins in self.fn.instructions():
            if isinstance(ins.dest, VirtualRegister) and ins.dest.index == result:
                ins.dest = narrow
            ins.dests = [narrow if isinstance(d, VirtualRegister) and d.index == result else d
                         for d in ins.dests]


class IgnoresRedefinition(rc.ConversionReuse):
    def clobbered(self, block, index, result, source) -> bool:
        return False


def reuse_block_local_liveness(fn: Function) -> bool:
    return rc.run_reuse(fn, BlockLocalLiveness)


def reuse_ignores_back_edge(fn: Function) -> bool:
    return rc.run_reuse(fn, IgnoresBackEdges)


def reuse_misses_phi_copy_reads(fn: Function) -> bool:
    return rc.run_reuse(fn, MissesPhiCopyReads)


def reuse_renames_every_def(fn: Function) -> bool:
    return rc.run_reuse(fn, RenamesEveryDef)


def reuse_ignores_redefinition(fn: Function) -> bool:
    return rc.run_reuse(fn, IgnoresRedefinition)


def _every_write_kills(ins, widths) -> set[int]:
    return vreg_alloc.written_indices(ins)


def vreg_ra_narrow_write_kills(fn: Function) -> bool:
    """vreg-ra whose liveness ends a vreg at any write to it, narrow or not."""
    return vreg_alloc.vreg_ra(fn, kills=_every_write_kills)


PASSES: tuple[Pass, ...] = (
    Pass("zoo-reuse-block-local-liveness", "reuse-conversion with block-local liveness",
         reuse_block_local_liveness),
    Pass("zoo-reuse-ignores-back-edge", "reuse-conversion whose liveness ignores back edges",
         reuse_ignores_back_edge),
    Pass("zoo-reuse-misses-phi-copy-reads", "reuse-conversion blind to parallel-copy reads",
         reuse_misses_phi_copy_reads),
    Pass("zoo-reuse-renames-every-def", "reuse-conversion renaming every def and use (Intel's patch)",
         reuse_renames_every_def),
    Pass("zoo-reuse-ignores-redefinition", "reuse-conversion ignoring a later write of the source",
         reuse_ignores_redefinition),
    Pass("zoo-vreg-ra-narrow-write-kills", "vreg-ra ending a vreg at a narrow write",
         vreg_ra_narrow_write_kills),
)  # fmt: skip


def _unit(attribute: str, name: str):
    function = globals()[attribute]
    return lambda: PassUnderTest(name, function, ("--pass", f"{MODULE}:{attribute}"))


_SEED = "seed 002 (Intel reuse_16bit_conversions_vgrf review)"

VARIANTS: tuple[Variant, ...] = (
    Variant("reuse-block-local-liveness", _SEED, "takes the source as dead when no later instruction of its block reads it", _unit("reuse_block_local_liveness", "zoo-reuse-block-local-liveness"), of="reuse-conversion"),
    Variant("reuse-ignores-back-edge", _SEED, "misses a read of the source around a loop's back edge", _unit("reuse_ignores_back_edge", "zoo-reuse-ignores-back-edge"), of="reuse-conversion"),
    Variant("reuse-misses-phi-copy-reads", _SEED + "; Mesa FsatWithPhi", "misses a read of the source by an out-of-SSA copy of a phi", _unit("reuse_misses_phi_copy_reads", "zoo-reuse-misses-phi-copy-reads"), of="reuse-conversion"),
)  # fmt: skip

HAND_WRITTEN: tuple[Variant, ...] = (
    Variant("reuse-renames-every-def", _SEED + " (the historic patch)", "renames every def and use of the result's vreg", _unit("reuse_renames_every_def", "zoo-reuse-renames-every-def"), of="reuse-conversion"),
    Variant("reuse-ignores-redefinition", _SEED, "renames although the source is written again while the result is live", _unit("reuse_ignores_redefinition", "zoo-reuse-ignores-redefinition"), of="reuse-conversion"),
    Variant("vreg-ra-narrow-write-kills", _SEED, "the allocator ends a vreg at a narrow write, handing out its live high half", _unit("vreg_ra_narrow_write_kills", "zoo-vreg-ra-narrow-write-kills"), of="vreg-ra"),
)  # fmt: skip
