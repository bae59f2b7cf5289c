"""Register pressure and occupancy: demand at every point, the register file Mesa sizes
from it, the halves an allocation uses, and Mesa's statistics line.

Two demands of an exec-level (SSA-valued) function, both in 16-bit halves:

* `demand(fn)`: Mesa's `agx_calc_register_demand`, computed the way Mesa's RA sizes the
  register file. Each block starts at the reserved region (1 half, r0l, when the function
  has control flow) plus its live-in values, where a phi destination read in the block is
  live in (Mesa's liveness skips phis; the phis themselves are then skipped so they are not
  counted twice, Mesa 8cc96d64). At each other instruction its destinations are added at
  power-of-two widths (a 64-bit value takes an aligned quad, so 4) and its killed sources
  are freed only after it ("late kill"); a destination nobody reads is never freed within
  its block, as in Mesa. `DemandMap.at[ins]` is the demand while `ins` executes. (Mesa
  also raises the demand to the fixed registers of preloads and exports; exports here
  write output slots, not registers, and nothing is preloaded.)
* `Liveness(fn).max_pressure`: what this project's allocator (`agxir.machine.regalloc`)
  counts and records: killed sources are freed before the destination is assigned (early
  kill), a dead destination occupies its register only at its definition, r0l is not
  counted. `value_demand` returns it.

`register_file(demand, widest)` rounds as `agx_ra` does: to a multiple of the widest value
(at least 8 halves), then up to the most registers the same occupancy allows, rounded
down to that alignment. The rounded demand is what decides the threads.

For an allocated (machine-level) function, `max_half_used` is the highest half any register
names (r0l included: it is a register) and `machine_stats` gives Mesa's statistics line
(`agx_dump_stats` in agx_compile.c): instrs, halfregs, threads, copies. halfregs is the
register count the hardware is given (`nr_gprs = max_reg + 1`, one past the highest half;
Mesa's stats line prints `max_reg` itself, one less) and threads its occupancy, as the
driver computes `max_threads` from `nr_gprs`. copies counts `parallel_copy` instructions
before copy lowering and, after it, the register-to-register moves and swap steps (an `xor`
of two registers into one of them) the lowering leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir.ir import EXEC, SSA, Block, Function, Instruction, Register, Value
from agxir.liveness import Liveness
from agxir.machine.occupancy import OCCUPANCY, threads_for_halves
from agxir.machine.regalloc import has_control_flow
from agxir.opcodes.table import BITOP_ALIASES

__all__ = [
    "DemandMap", "demand", "value_demand", "register_file", "max_half_used", "Stats",
    "machine_stats",
]  # fmt: skip

MIN_FILE_ALIGNMENT = 8  # agx_ra: reg_file_alignment = MAX2(max_ncomps, 8)


def width(value: Value) -> int:
    """Halves Mesa's RA gives `value`: its size rounded up to a power of two."""
    halves = max(1, value.size // 16)
    return 1 << (halves - 1).bit_length()


def reserved_halves(fn: Function) -> int:
    """Mesa's `reserved_size`: the nesting counter r0l when there is control flow."""
    return 1 if has_control_flow(fn) else 0


@dataclass
class DemandMap:
    """Mesa's demand of one function: at each block's entry (`entry[B]`), while each
    non-phi instruction executes (`at[ins]`), and the largest (`maximum`). `widest` is the
    widest value in halves (what the register file is aligned to)."""

    entry: dict[Block, int] = field(default_factory=dict)
    at: dict[Instruction, int] = field(default_factory=dict)
    maximum: int = 0
    widest: int = 1

    @property
    def register_file(self) -> int:
        return register_file(self.maximum, self.widest)

    @property
    def threads(self) -> int:
        return threads_for_halves(align(self.maximum, max(self.widest, MIN_FILE_ALIGNMENT)))


def _first_non_phi(block: Block) -> int:
    for index, ins in enumerate(block.instructions):
        if not ins.is_phi:
            return index
    return len(block.instructions)


def demand(fn: Function, liveness: Liveness | None = None) -> DemandMap:
    """Mesa's register demand of SSA- or exec-level `fn` at every point (see the module)."""
    live = liveness if liveness is not None else Liveness(fn)
    reserved = reserved_halves(fn)
    result = DemandMap()
    for value in fn.values():
        result.widest = max(result.widest, width(value))
    for block in dict.fromkeys(fn.blocks):
        start = _first_non_phi(block)
        body = block.instructions[start:]
        # Mesa's live-in: everything live before the first non-phi instruction, the phi
        # destinations it goes on to read included.
        live_in = live.live_before(body[0]) if body else live.live_out[block]
        current = reserved + sum(width(v) for v in live_in)
        result.entry[block] = current
        result.maximum = max(result.maximum, current)
        late = 0
        for ins in body:
            current -= late
            late = sum(width(v) for v in live.kills.get(ins, ()))
            for dest in ins.defs():
                if isinstance(dest, Value):
                    current += width(dest)  # already a power of two: nothing late to free
            result.at[ins] = current
            result.maximum = max(result.maximum, current)
    return result


def value_demand(fn: Function, liveness: Liveness | None = None) -> int:
    """The demand this project's allocator records (early kill, r0l not counted)."""
    return (liveness if liveness is not None else Liveness(fn)).max_pressure


def align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def register_file(demand_halves: int, widest: int = 1) -> int:
    """The halves `agx_ra` lets itself use for a demand (0 when nothing fits): the demand
    aligned to the widest value (at least 8), then the most halves the same occupancy
    allows, rounded down to that alignment."""
    alignment = max(widest, MIN_FILE_ALIGNMENT)
    aligned = align(demand_halves, alignment)
    for bound, _threads in OCCUPANCY:
        if aligned <= bound:
            return bound - bound % alignment
    return 0


def max_half_used(fn: Function) -> int:
    """The highest 16-bit half a register of `fn` names (r0l included); -1 when none."""
    highest = -1
    for ins in fn.instructions():
        for ref in [src.ref for src in ins.srcs] + ins.defs():
            if isinstance(ref, Register):
                highest = max(highest, ref.half + ref.size // 16 - 1)
    return highest


@dataclass(frozen=True)
class Stats:
    instrs: int
    halfregs: int
    threads: int
    copies: int

    def line(self) -> str:
        return (f"{self.instrs} instrs, {self.halfregs} halfregs, {self.threads} threads, "
                f"{self.copies} copies")


def is_copy(ins: Instruction) -> bool:
    """A parallel copy, a register-to-register move, or one `xor` step of a swap."""
    if ins.name == "parallel_copy":
        return True
    if ins.name != "bitop" or not isinstance(ins.dest, Register):
        return False
    registers = [src.ref for src in ins.srcs if isinstance(src.ref, Register)]
    if ins.attrs.get("tt") == BITOP_ALIASES["mov"]:
        return bool(ins.srcs) and isinstance(ins.srcs[0].ref, Register)
    if ins.attrs.get("tt") == BITOP_ALIASES["xor"]:
        return len(registers) == 2 and ins.dest in registers
    return False


def machine_stats(fn: Function) -> Stats:
    """Mesa's statistics line for `fn`. At the machine level halfregs is one past the
    highest half used; at the SSA and exec levels (nothing allocated yet) it is Mesa's
    demand, and threads the occupancy of the register file `agx_ra` would size."""
    instructions = list(fn.instructions())
    copies = sum(1 for ins in instructions if is_copy(ins))
    if fn.level in (SSA, EXEC):
        need = demand(fn)
        return Stats(len(instructions), need.maximum, need.threads, copies)
    halfregs = max_half_used(fn) + 1
    return Stats(len(instructions), halfregs, threads_for_halves(halfregs), copies)
