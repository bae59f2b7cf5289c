"""The bug zoo's pressure-scheduler variants: each is the right scheduler
(`agxir.passes.pressure_schedule`) with one of its checks removed, exposed as a module-level
callable (`--pass fuzz.zoo.schedule_variants:NAME`, what replay commands name), a `Pass`
named `pressure-schedule-...` (so the `pressure` step oracle, which holds every
pressure-lowering pass and its variants to the invariant, applies) and a `Variant`.

1. `schedule-keeps-worse-order`: the new order replaces the old whatever its pressure (the
   check "keep it only if the maximum pressure drops" is gone); a greedy bottom-up order
   is often worse, and the `pressure` oracle catches the block whose pressure rose.
2. `schedule-ignores-memory-order`: no memory edges, so a load may move across a store to
   the same address (Mesa serializes every load and store); refinement catches the value
   the load now reads.
3. `schedule-moves-phis`: phis are scheduled like any instruction, as Mesa's `create_dag`
   does (it walks the block from its first instruction, phis included) [OBS: a reading of
   the code; Mesa has no test of it]: a phi whose pressure change is the least is placed
   below a non-phi, and the verifier rejects a phi after a non-phi.
4. `schedule-moves-exports`: exports are scheduled like pure instructions (no order among
   them), so two exports to one slot may swap and the earlier value wins; refinement
   catches it.
"""

from __future__ import annotations

from agxir.ir import Function, Instruction
from agxir.passes.pass_ import Pass
from agxir.passes.pressure_schedule import pressure_schedule
from agxir.passes.schedule_deps import build_dag, is_fixed
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.schedule_variants"


def pressure_schedule_keeps_worse_order(fn: Function) -> bool:
    return pressure_schedule(fn, keep=lambda new, old: True)


def pressure_schedule_ignores_memory_order(fn: Function) -> bool:
    return pressure_schedule(fn, dag=lambda region: build_dag(region, memory=False))


def _fixed_but_phis(ins: Instruction) -> bool:
    return is_fixed(ins) and not ins.is_phi


def pressure_schedule_moves_phis(fn: Function) -> bool:
    return pressure_schedule(fn, fixed=_fixed_but_phis)


def _fixed_but_exports(ins: Instruction) -> bool:
    """Only phis and terminators stay: the side effects that are not memory (exports) move."""
    return ins.is_phi or ins.is_terminator


def pressure_schedule_moves_exports(fn: Function) -> bool:
    return pressure_schedule(fn, fixed=_fixed_but_exports)


_FUNCTIONS = (
    (pressure_schedule_keeps_worse_order, "keeps the new order even when its pressure is higher"),
    (pressure_schedule_ignores_memory_order, "moves loads and stores across each other"),
    (pressure_schedule_moves_phis, "schedules phis like other instructions (Mesa's create_dag)"),
    (pressure_schedule_moves_exports, "schedules exports like pure instructions"),
)

PASSES: tuple[Pass, ...] = tuple(
    Pass(function.__name__.replace("_", "-"), summary, function) for function, summary in _FUNCTIONS
)


def _unit(function):
    name = function.__name__
    return lambda: PassUnderTest(name.replace("_", "-"), function, ("--pass", f"{MODULE}:{name}"))


VARIANTS: tuple[Variant, ...] = (
    Variant("schedule-keeps-worse-order", "issue 9 (Mesa agx_pressure_schedule's bail-out)", "keeps the scheduled order even when the block's maximum pressure rose", _unit(pressure_schedule_keeps_worse_order), of="pressure-schedule"),
    Variant("schedule-ignores-memory-order", "issue 9 (Mesa create_dag's memory_store chain)", "moves a load across a store to the same buffer", _unit(pressure_schedule_ignores_memory_order), of="pressure-schedule"),
    Variant("schedule-moves-phis", "Mesa create_dag [OBS]", "schedules phis like any instruction, so one lands below a non-phi", _unit(pressure_schedule_moves_phis), of="pressure-schedule"),
    Variant("schedule-moves-exports", "issue 9 (exports are fixed)", "schedules exports like pure instructions, so two exports to one slot swap", _unit(pressure_schedule_moves_exports), of="pressure-schedule"),
)  # fmt: skip
