"""The bug zoo's machine-level variants: control-flow lowering, register allocation and
parallel-copy lowering, each the right pass with one documented thing changed.

Each variant's function is importable (`--pass fuzz.zoo.machine_variants:NAME`), which is
what replay commands name; each `Variant` runs the right machine passes before and after
the wrong one, so a finding is a whole SSA program lowered as the campaign lowers it.
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Register
from agxir.liveness import EMPTY, Liveness
from agxir.machine import lower_copies as copies
from agxir.machine.lower_cf import Lowering, lower_cf
from agxir.machine.regalloc import Allocator, run_ra
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.machine_variants"

# --- control-flow lowering ------------------------------------------------------------------


class ElseInConditionBlock(Lowering):
    """Mesa 41b78916 put else_icmp in the wrong block; here it lands in the block that ends
    in the if, so the mask flips before the then side runs."""

    ELSE_IN_ELSE_BLOCK = False


class BreakNestingOneShort(Lowering):
    """A break counts its loop but not the if it sits in: the pop after the if re-activates
    the lanes that broke, and they run the rest of the iteration."""

    BREAK_NEST_EXTRA = 1


class NoPopAfterElse(Lowering):
    """The pop_exec after the else side is missing: lanes stay masked after the if."""

    POP_AFTER_ELSE = False


def else_wrong_block(fn: Function) -> bool:
    return lower_cf(fn, ElseInConditionBlock)


def break_wrong_nesting(fn: Function) -> bool:
    return lower_cf(fn, BreakNestingOneShort)


def missing_pop_exec(fn: Function) -> bool:
    return lower_cf(fn, NoPopAfterElse)


# --- register allocation ----------------------------------------------------------------------


class ForwardOnlyLiveness(Liveness):
    """Liveness that ignores back edges: a value used around the loop dies at its last use
    in the body."""

    def _edge(self, pred, succ):
        if (pred, succ) in self.cfg.back_edges:
            return EMPTY
        return super()._edge(pred, succ)


class FreeAtLastUseInLoop(Allocator):
    LIVENESS = ForwardOnlyLiveness


class DemandCountsPhisTwice(Allocator):
    """Mesa 8cc96d64: the demand at a block's entry took its phis twice."""

    def entry_demand(self, busy, phis) -> None:
        extra = sum(phi.dest.size // 16 for phi in phis)
        self.demand = max(self.demand, len(busy - self.reserved) + extra)


def ra_free_at_last_use_in_loop(fn: Function) -> bool:
    return run_ra(fn, FreeAtLastUseInLoop)


def ra_demand_phis_twice(fn: Function) -> bool:
    return run_ra(fn, DemandCountsPhisTwice)


# --- parallel-copy lowering -------------------------------------------------------------------


def _no_cycle_breaking(pieces):
    return copies.sequence(pieces, break_cycles=False)


def _two_move_swaps(steps):
    return copies.emit(steps, xor_swaps=False)


def _split_64_low_half(copy):
    """A 64-bit copy that moves only its low 32 bits."""
    pieces = copies.split(copy)
    wide = {
        dest.half + i
        for dest, src in zip(copy.dests, copy.srcs, strict=True)
        if dest.size == 64 and isinstance(src.ref, Register | Immediate)
        for i in (2, 3)
    }
    return [piece for piece in pieces if piece.dest not in wide]


def copies_no_cycle_breaking(fn: Function) -> bool:
    return copies.lower_copies(fn, sequence=_no_cycle_breaking)


def copies_swap_as_two_moves(fn: Function) -> bool:
    return copies.lower_copies(fn, emit=_two_move_swaps)


def copy_64_one_half(fn: Function) -> bool:
    return copies.lower_copies(fn, split=_split_64_low_half)


def _unit(attribute: str):
    function = globals()[attribute]
    return lambda: PassUnderTest(
        "zoo-" + attribute.replace("_", "-"), function, ("--pass", f"{MODULE}:{attribute}")
    )


MACHINE_VARIANTS: tuple[Variant, ...] = (
    Variant("cf-else-wrong-block", "Mesa 41b78916 (else_icmp in the wrong block)", "the else lands in the block that ends in the if", _unit("else_wrong_block"), of="lower-cf"),
    Variant("cf-break-wrong-nesting", "agx-notes: break nest = ifs in the loop + 1", "a break inside an if counts only its loop", _unit("break_wrong_nesting"), of="lower-cf"),
    Variant("cf-missing-pop-exec", "issue 8", "no pop_exec after an else side", _unit("missing_pop_exec"), of="lower-cf"),
    Variant("ra-free-at-last-use-in-loop", "issue 8", "frees a value at its last use in a loop body though it is live around the back edge", _unit("ra_free_at_last_use_in_loop"), of="ra"),
    Variant("ra-demand-phis-twice", "Mesa 8cc96d64", "the allocator's demand counts phis twice", _unit("ra_demand_phis_twice"), of="ra"),
    Variant("copies-no-cycle-breaking", "Mesa test-lower-parallel-copy Cycle3", "sequentializes a cycle without a swap", _unit("copies_no_cycle_breaking"), of="lower-copies"),
    Variant("copies-swap-as-two-moves", "Mesa test-lower-parallel-copy Swap", "does a swap as two moves", _unit("copies_swap_as_two_moves"), of="lower-copies"),
    Variant("copies-64-one-half", "Mesa 96cd4675 (64-bit parallel copies)", "a 64-bit copy moves only its low half", _unit("copy_64_one_half"), of="lower-copies"),
)  # fmt: skip
