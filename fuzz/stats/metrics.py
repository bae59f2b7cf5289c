"""What `agxfuzz stats` measures of one program compiled by one pipeline.

`compile_and_measure(fn, pipeline)` runs the pipeline's passes on a copy of the SSA program
`fn` (SSA passes, then a route through register allocation) and returns `Metrics`:

* `instrs`, `halfregs`, `threads`, `copies`: Mesa's statistics line of the allocated
  function (`agxir.machine.pressure.machine_stats`; halfregs is one past the highest half
  used, threads its occupancy, copies the register moves and swap steps copy lowering left).
* `pressure`: the most 16-bit halves live at once, measured right before the pipeline's
  register allocator: Mesa's demand (`agxir.machine.pressure.demand`: late kill,
  power-of-two widths, r0l reserved under control flow) of the exec-level function before
  `ra`, and for the vreg route (`vreg-ra`) `vreg_pressure`, the halves of the virtual
  registers live at once (a vreg counts whole while any of it is live, as the colouring
  allocator sees it: what seed 002's conversion reuse changes).

Nothing here judges the passes: a pass that raises is reported as the program's failure
for that pipeline (`CompileFailed`), never hidden and never fatal to the run.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

from agxir.ir import MACHINE, VREG, Function, VirtualRegister, clone_function
from agxir.machine.pressure import demand, machine_stats
from agxir.machine.vreg_alloc import vreg_liveness

__all__ = ["ALLOCATORS", "METRICS", "LOWER_IS_BETTER", "Metrics", "CompileFailed",
           "compile_and_measure", "measured", "pressure_before", "vreg_pressure"]  # fmt: skip

METRICS: tuple[str, ...] = ("instrs", "halfregs", "threads", "copies", "pressure")
# For every metric but threads (occupancy) less is better.
LOWER_IS_BETTER: dict[str, bool] = {m: m != "threads" for m in METRICS}
ALLOCATORS = ("ra", "vreg-ra")


@dataclass(frozen=True)
class Metrics:
    instrs: int
    halfregs: int
    threads: int
    copies: int
    pressure: int

    def values(self) -> tuple[int, ...]:
        return astuple(self)


class CompileFailed(Exception):
    """A pass of the pipeline raised on this program: `step` names it."""

    def __init__(self, step: str, error: BaseException) -> None:
        self.step = step
        self.reason = f"{step}: {type(error).__name__}: {error}"
        super().__init__(self.reason)


def vreg_pressure(fn: Function) -> int:
    """The most halves of virtual registers live at once in vreg-level `fn`: at each block's
    end its live-out vregs, and at each instruction what is live after it plus what it
    writes (a written vreg occupies its register even if nothing reads it)."""
    live_out = vreg_liveness(fn)
    most = 0
    for block in fn.blocks:
        live = set(live_out[block])
        most = max(most, sum(v.size // 16 for v in live))
        for ins in reversed(block.instructions):
            written = {d for d in ins.defs() if isinstance(d, VirtualRegister)}
            most = max(most, sum(v.size // 16 for v in live | written))
            live -= written
            live |= {s.ref for s in ins.srcs if isinstance(s.ref, VirtualRegister)}
            most = max(most, sum(v.size // 16 for v in live))
    return most


def pressure_before(step: str, fn: Function) -> int:
    """The pressure of `fn` about to be allocated by `step` (see the module)."""
    try:
        return vreg_pressure(fn) if fn.level == VREG else demand(fn).maximum
    except Exception as error:  # measuring is ours, but say where it broke
        raise CompileFailed(f"pressure before {step}", error) from None


def measured(fn: Function, pressure: int | None) -> Metrics:
    """The metrics of `fn` at the end of a pipeline whose allocator saw `pressure`."""
    if pressure is None or fn.level != MACHINE:
        raise CompileFailed("pipeline", ValueError(
            f"ends at the {fn.level} level without a register allocator"))
    stats = machine_stats(fn)
    return Metrics(stats.instrs, stats.halfregs, stats.threads, stats.copies, pressure)


def compile_and_measure(fn: Function, passes) -> Metrics:
    """Run `passes` (each with `.name` and `.run(fn)`) on a copy of `fn` and measure the
    result; `CompileFailed` when a pass raises or the pipeline never reaches a register
    allocator and the machine level."""
    work = clone_function(fn)
    pressure = None
    for step in passes:
        if step.name in ALLOCATORS:
            pressure = pressure_before(step.name, work)
        try:
            step.run(work)
        except Exception as error:
            raise CompileFailed(step.name, error) from None
    return measured(work, pressure)
