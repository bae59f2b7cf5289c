"""`reuse-conversion`: a 32-to-16-bit conversion whose source dies writes its result into
the low half of the source's virtual register (seed 002, Intel's
`reuse_16bit_conversions_vgrf`), on the vreg level, before the vreg allocator.

`v14:16 = convert v39:32 mode=f2f` becomes `v39:16 = convert v39:32 mode=f2f` when v39 is
not read again, and the reads of v14 that this definition reaches become reads of
`v39:16`, the low half of v39 (see `agxir.machine.vreg_alloc`: a vreg is its index,
allocated at its widest size). The review's doubts are the checks, each a method a zoo
variant (`fuzz.zoo.reuse_variants`) overrides:

1. `web`: virtual registers are not SSA, so only the live range of THIS definition of the
   result is renamed: the reads it reaches (over the logical CFG, up to a redefinition),
   and none of them may also be reached by another definition of the result (or by the
   entry, with nothing written): a shared live range is left alone. The historic patch
   renamed every def and use of the destination vgrf.
2. `source_live_after`: the source must be dead after the conversion by liveness over the
   logical CFG to a fixpoint (reads on a later path or around a back edge count), at any
   width (a narrow read of the source's index counts).
3. `clobbered`: no write of the source's index (at any width) while the renamed result is
   still live: the source may be redefined later (a loop, an out-of-SSA copy), and then it
   would overwrite the result.
4. `kills`: a narrow write leaves the rest of its register alive, so in the liveness above
   a write kills an index only at its widest size.

Plus the shape: a `convert` with a 16-bit vreg destination accessed only at 16 bits and a
32-bit vreg source whose index is 32 bits wide (a 64-bit source is left alone), distinct
indices. `decisions(fn)` says, per candidate conversion, what the pass did and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir.ir import VREG, Block, Function, Instruction, VirtualRegister
from agxir.machine.block_liveness import live_after, live_out
from agxir.machine.vreg_alloc import (
    killed_indices,
    read_indices,
    vreg_widths,
    written_indices,
)
from agxir.passes.pass_ import Pass

Position = tuple[Block, int]


@dataclass(frozen=True)
class Decision:
    """What the pass did with one candidate conversion, and why."""

    block: str
    index: int
    source: int  # the source's vreg index
    result: int  # the result's vreg index
    reused: bool
    why: str


def is_candidate(ins: Instruction) -> bool:
    """A conversion writing 16 bits of a vreg from 32 bits of another."""
    if ins.name != "convert" or not isinstance(ins.dest, VirtualRegister) or ins.dest.size != 16:
        return False
    src = ins.srcs[0].ref
    return isinstance(src, VirtualRegister) and src.size == 32 and src.index != ins.dest.index


class ConversionReuse:
    """One run of the pass over a vreg-level function."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.decisions: list[Decision] = []

    # --- analyses (recomputed after every rewrite) ------------------------------------------
    def analyse(self) -> None:
        fn = self.fn
        self.widths = vreg_widths(fn)
        self.live_out = self.block_live_out()
        self.positions = [(block, i) for block in fn.blocks for i in range(len(block.instructions))]

    def kills(self, ins: Instruction) -> set[int]:
        """Check 4: the indices an instruction overwrites whole; a narrow write kills none."""
        return killed_indices(ins, self.widths)

    def successors(self, block: Block) -> list[Block]:
        return block.successors

    def reads(self, ins: Instruction) -> set[int]:
        """The indices an instruction reads, for liveness."""
        return read_indices(ins)

    def accesses(self, ins: Instruction) -> tuple[set[int], set[int]]:
        return self.reads(ins), self.kills(ins)

    def block_live_out(self) -> dict[Block, set[int]]:
        """The indices live out of each block, over `successors` to a fixpoint."""
        return live_out(self.fn.blocks, self.accesses, self.successors)

    def live_after(self, block: Block, index: int) -> set[int]:
        """The indices live just after instruction `index` of `block`."""
        return live_after(self.live_out[block], block, index, self.accesses)

    def reach(self, start: Position | None, stops) -> list[Position]:
        """The instructions control reaches after `start` (from the entry when None) without
        passing an instruction for which `stops(ins)` holds; such an instruction is reached
        but nothing after it."""
        fn = self.fn
        reached: list[Position] = []
        seen_entry: set[Block] = {fn.blocks[0]} if start is None else set()
        work: list[Position] = [(fn.blocks[0], 0)] if start is None else [(start[0], start[1] + 1)]
        while work:
            block, first = work.pop()
            through = True
            for i in range(first, len(block.instructions)):
                reached.append((block, i))
                if stops(block.instructions[i]):
                    through = False
                    break
            if through:
                for succ in block.successors:
                    if succ not in seen_entry:
                        seen_entry.add(succ)
                        work.append((succ, 0))
        return reached

    # --- the checks ---------------------------------------------------------------------------
    def source_live_after(self, block: Block, index: int, source: int) -> bool:
        """Check 2: the source's index is read again on some path after the conversion."""
        return source in self.live_after(block, index)

    def web(self, block: Block, index: int, result: int) -> list[Position] | None:
        """Check 1: the reads of the result this definition reaches, or None when another
        definition (or the entry) reaches one of them too."""
        def writes_result(ins):
            return result in written_indices(ins)

        reached = self.reach((block, index), writes_result)
        uses = [(b, i) for b, i in reached if result in read_indices(b.instructions[i])]
        others = set(self.reach(None, writes_result))
        for b, ins_list in ((b, b.instructions) for b in self.fn.blocks):
            for i, ins in enumerate(ins_list):
                if writes_result(ins) and (b, i) != (block, index):
                    others.update(self.reach((b, i), writes_result))
        if any(use in others for use in uses):
            return None
        return uses

    def clobbered(self, block: Block, index: int, result: int, source: int) -> bool:
        """Check 3: the source's index is written while this definition of the result is
        still live (after the renaming, that write would overwrite the result)."""
        for b, i in self.reach((block, index), lambda ins: result in written_indices(ins)):
            ins = b.instructions[i]
            if source in written_indices(ins) and result not in written_indices(ins):
                if result in self.live_after(b, i):
                    return True
        return False

    def whole_register(self, source: int, result: int) -> str | None:
        if self.widths[source] != 32:
            return f"v{source} is {self.widths[source]} bits wide, not 32"
        if self.widths[result] != 16:
            return f"v{result} is also accessed at {self.widths[result]} bits"
        return None

    # --- the pass -----------------------------------------------------------------------------
    def consider(self, block: Block, index: int) -> bool:
        ins = block.instructions[index]
        source, result = ins.srcs[0].ref.index, ins.dest.index

        def decide(reused: bool, why: str) -> bool:
            self.decisions.append(Decision(block.name, index, source, result, reused, why))
            return reused

        problem = self.whole_register(source, result)
        if problem:
            return decide(False, problem)
        if self.source_live_after(block, index, source):
            return decide(False, f"v{source} is read again after the conversion")
        uses = self.web(block, index, result)
        if uses is None:
            return decide(False, f"a read of v{result} is reached by another definition of it")
        if self.clobbered(block, index, result, source):
            return decide(False, f"v{source} is written while v{result} is live")
        self.rename(block, index, uses, result, source)
        return decide(True, f"v{source} dies here: v{result} becomes its low half v{source}:16")

    def rename(self, block: Block, index: int, uses: list[Position], result: int, source: int) -> None:
        narrow = VirtualRegister(source, 16)
        block.instructions[index].dest = narrow
        for b, i in uses:
            ins = b.instructions[i]
            ins.srcs = [
                src.with_ref(narrow)
                if isinstance(src.ref, VirtualRegister) and src.ref.index == result else src
                for src in ins.srcs
            ]

    def run(self) -> bool:
        changed = False
        done: set[int] = set()  # candidates considered, by identity
        while True:
            self.analyse()
            for block, index in self.positions:
                ins = block.instructions[index]
                if id(ins) in done or not is_candidate(ins):
                    continue
                done.add(id(ins))
                if self.consider(block, index):
                    changed = True
                    break  # the analyses are stale now
            else:
                return changed


def decisions(fn: Function, reuse: type[ConversionReuse] = ConversionReuse) -> list[Decision]:
    """Run the pass on `fn` (in place) and say what it did with each candidate."""
    run = reuse(fn)
    run.run()
    return run.decisions


def run_reuse(fn: Function, reuse: type[ConversionReuse] = ConversionReuse) -> bool:
    if fn.level != VREG:
        raise ValueError(f"reuse-conversion takes a vreg-level function, not {fn.level}")
    return reuse(fn).run()


def reuse_conversion(fn: Function) -> bool:
    return run_reuse(fn)


PASS = Pass(
    "reuse-conversion",
    "a 32-to-16-bit conversion whose source dies writes the low half of the source's vreg (seed 002)",
    reuse_conversion,
)
