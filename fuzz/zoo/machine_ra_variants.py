"""The bug zoo's register-allocation and parallel-copy variants: each is the right pass
(`agxir.machine.regalloc`, `agxir.machine.lower_copies`) with one documented thing changed,
exposed as a `Pass` named `zoo-...`, as a module-level callable (`--pass
fuzz.zoo.machine_ra_variants:NAME`, what replay commands name) and as a `Variant` for
`fuzz.zoo.runner` that runs the right machine passes before and after the wrong one.

1. `zoo-copies-no-cycle-breaking`: once only cycles are left, a cycle is sequentialized as
   plain moves, so its first move clobbers a half the last one still reads (Mesa's
   LowerParallelCopy.Cycle3 fails).
2. `zoo-swap-as-two-moves`: a swap is `a = b; b = a`, the second move reading the first's
   result (Mesa's LowerParallelCopy.Swap fails).
3. `zoo-copy-64-one-half`: a 64-bit copy (register or immediate) moves only its low 32 bits
   (Mesa 96cd4675 fixed 64-bit parallel copies).
4. `zoo-ra-free-at-last-use-in-loop`: the allocator's liveness ignores back edges, so a value
   defined before a loop dies at its last use in the body and its register is handed out
   again, although the next iteration reads it.
5. `zoo-ra-demand-phis-twice` (Mesa 8cc96d64, "RA demand double-counted phis"): Mesa's
   agx_calc_register_demand takes a block's phi destinations into its live-in count and
   then counted each phi again as an instruction with a destination; the fix skips phis
   ("already accounted for in the live-in set"). The demand decides Mesa's register bound
   and so the occupancy: too high a demand costs threads, or spills for nothing. Here the
   block-entry count adds the phi destinations a second time, and the recorded demand (and
   the threads it implies) is wrong; the demand oracle catches it.
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Register
from agxir.liveness import EMPTY, Liveness
from agxir.machine import lower_copies as copies
from agxir.machine.regalloc import Allocator, run_ra
from agxir.passes.pass_ import Pass
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.machine_ra_variants"

# --- register allocation ----------------------------------------------------------------------


class ForwardOnlyLiveness(Liveness):
    """Liveness that ignores back edges: a value used around a loop dies at its last use in
    the body."""

    def _edge(self, pred, succ):
        if (pred, succ) in self.cfg.back_edges:
            return EMPTY
        return super()._edge(pred, succ)


class FreeAtLastUseInLoop(Allocator):
    LIVENESS = ForwardOnlyLiveness


class DemandCountsPhisTwice(Allocator):
    """Mesa 8cc96d64: the demand at a block's entry takes its phi destinations twice."""

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
    """The half copies of `copy` without the upper 32 bits of its 64-bit copies."""
    pieces = copies.split(copy)
    upper = {
        dest.half + i
        for dest, src in zip(copy.dests, copy.srcs, strict=True)
        if dest.size == 64 and isinstance(src.ref, Register | Immediate)
        for i in (2, 3)
    }
    return [piece for piece in pieces if piece.dest not in upper]


def copies_no_cycle_breaking(fn: Function) -> bool:
    return copies.lower_copies(fn, sequence=_no_cycle_breaking)


def swap_as_two_moves(fn: Function) -> bool:
    return copies.lower_copies(fn, emit=_two_move_swaps)


def copy_64_one_half(fn: Function) -> bool:
    return copies.lower_copies(fn, split=_split_64_low_half)


# --- as passes and zoo entries ----------------------------------------------------------------

PASSES: tuple[Pass, ...] = (
    Pass("zoo-copies-no-cycle-breaking", "lower-copies without cycle breaking", copies_no_cycle_breaking),
    Pass("zoo-swap-as-two-moves", "lower-copies doing a swap as two moves", swap_as_two_moves),
    Pass("zoo-copy-64-one-half", "lower-copies moving half of a 64-bit copy", copy_64_one_half),
    Pass("zoo-ra-free-at-last-use-in-loop", "ra freeing a loop-carried value at its last use",
         ra_free_at_last_use_in_loop),
    Pass("zoo-ra-demand-phis-twice", "ra counting phi destinations twice (Mesa 8cc96d64)",
         ra_demand_phis_twice),
)  # fmt: skip


def _unit(attribute: str, name: str):
    function = globals()[attribute]
    return lambda: PassUnderTest(name, function, ("--pass", f"{MODULE}:{attribute}"))


_AFTER_RA = ("lower-phis", "lower-copies")
_BEFORE_COPIES = ("lower-cf", "ra", "lower-phis")

VARIANTS: tuple[Variant, ...] = (
    Variant("copies-no-cycle-breaking", "Mesa test-lower-parallel-copy Cycle3", "sequentializes a cycle without a swap", _unit("copies_no_cycle_breaking", "zoo-copies-no-cycle-breaking"), before=_BEFORE_COPIES),
    Variant("swap-as-two-moves", "Mesa test-lower-parallel-copy Swap", "does a swap as two moves", _unit("swap_as_two_moves", "zoo-swap-as-two-moves"), before=_BEFORE_COPIES),
    Variant("copy-64-one-half", "Mesa 96cd4675 (64-bit parallel copies)", "a 64-bit copy moves only its low half", _unit("copy_64_one_half", "zoo-copy-64-one-half"), before=_BEFORE_COPIES),
    Variant("ra-free-at-last-use-in-loop", "issue 8", "frees a value at its last use in a loop body though it is live around the back edge", _unit("ra_free_at_last_use_in_loop", "zoo-ra-free-at-last-use-in-loop"), before=("lower-cf",), after=_AFTER_RA),
    Variant("ra-demand-phis-twice", "Mesa 8cc96d64", "the allocator's demand counts phis twice", _unit("ra_demand_phis_twice", "zoo-ra-demand-phis-twice"), before=("lower-cf",), after=_AFTER_RA),
)  # fmt: skip
