"""The bug zoo's control-flow lowering variants: `lower-cf` with one thing changed each,
as `Pass`es named `zoo-...` (the functions are importable, so `--pass
fuzz.zoo.machine_cf_variants:NAME` replays them).

* `zoo-else-wrong-block` (Mesa 41b78916): the unconditional `else_icmp` lands at the end
  of the then side instead of the start of the else block. The wave's masks come out the
  same, but the block the else sits in is now where the else lanes wake: per lane, the last
  block a lane was active in (what a phi and the liveness of the logical CFG go by) is the
  then block for the else lanes and the condition block for the then lanes. Caught where
  the then side is empty and the merge has a phi.
* `zoo-break-nesting`: `break n` one too small when the break sits inside an if in a loop:
  the if's own pop wakes the lanes that broke, and they run the rest of the iteration.
* `zoo-missing-pop-exec`: no `pop_exec` after the else side: the then lanes stay masked
  after the if.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.machine.lower_cf import Lowering, lower_cf
from agxir.passes.pass_ import Pass


class ElseAtThenEnd(Lowering):
    ELSE_AT_THEN_END = True


class BreakNestOneShort(Lowering):
    BREAK_NEST_EXTRA = Lowering.BREAK_NEST_EXTRA - 1


class NoPopAfterElse(Lowering):
    POP_AFTER_ELSE = False


def else_wrong_block(fn: Function) -> bool:
    return lower_cf(fn, ElseAtThenEnd)


def break_nesting(fn: Function) -> bool:
    return lower_cf(fn, BreakNestOneShort)


def missing_pop_exec(fn: Function) -> bool:
    return lower_cf(fn, NoPopAfterElse)


ELSE_WRONG_BLOCK = Pass(
    "zoo-else-wrong-block", "lower-cf with else_icmp at the end of the then side (Mesa 41b78916)",
    else_wrong_block,
)
BREAK_NESTING = Pass(
    "zoo-break-nesting", "lower-cf with break n one too small inside an if in a loop", break_nesting
)
MISSING_POP_EXEC = Pass(
    "zoo-missing-pop-exec", "lower-cf without the pop_exec after an else side", missing_pop_exec
)

CF_VARIANTS: tuple[Pass, ...] = (ELSE_WRONG_BLOCK, BREAK_NESTING, MISSING_POP_EXEC)
