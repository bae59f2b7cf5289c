"""Register allocation of an exec-level (SSA) function, modeled on agx_register_allocate.c.

SSA-based, no interference graph: blocks are visited in layout order, which the
control-flow lowering makes a dominance order, so every value is assigned at its definition
before any use, and the registers busy at a block's entry are exactly those of its live-in
values. Within a block, the registers of a instruction's killed sources are freed before its
destination is assigned (a destination may reuse a dying source, as Mesa's does).

* Sizes are 1, 2 or 4 halves, naturally aligned; the lowest free aligned region is taken,
  after the affinity hints: a phi destination prefers a register one of its sources already
  has, a phi source prefers its phi's register, a `mov` prefers its dying source's.
* r0l (half 0) is reserved when the function has control flow.
* The bound is 256 halves, or `max_halves_for_threads(threads)` from the occupancy table
  when an occupancy is asked for. Departure from Mesa: no eviction by parallel copies and
  no spilling; a demand over the bound raises `RegisterBoundExceeded`.

The result keeps register phis (`r4 = phi [r2, b1], [#0, b2]`) for `lower-phis`. Nothing
else is inserted or reordered, so the RA checker can align the result with its input.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir.ir import R0L, Function, Operand, Register, Value
from agxir.liveness import Liveness
from agxir.machine.occupancy import max_halves_for_threads
from agxir.passes.pass_ import Pass

DEFAULT_BOUND = 256
CONTROL = frozenset({
    "if_icmp", "if_fcmp", "else_icmp", "else_fcmp", "while_icmp", "while_fcmp",
    "pop_exec", "push_exec", "break", "jmp_exec_any", "jmp_exec_none",
})  # fmt: skip


class RegisterBoundExceeded(Exception):
    """More halves are live at once than the bound allows (no spilling in this model)."""


@dataclass(frozen=True)
class Allocation:
    registers: dict[Value, Register]
    demand: int  # the most halves live at once, as the allocator counted them
    highest_half: int  # the highest half assigned, -1 when none
    bound: int


def has_control_flow(fn: Function) -> bool:
    return any(ins.name in CONTROL for ins in fn.instructions())


class Allocator:
    """The allocator; `LIVENESS` and `entry_demand` are what the bug zoo swaps."""

    LIVENESS: type[Liveness] = Liveness

    def __init__(self, fn: Function, bound: int) -> None:
        self.fn = fn
        self.bound = bound
        self.liveness = self.LIVENESS(fn)
        self.reserved = {R0L.half} if has_control_flow(fn) else set()
        self.assigned: dict[Value, Register] = {}
        self.hints: dict[Value, list[Value]] = {}
        self.demand = 0
        for block in fn.blocks:
            for phi in block.phis():
                for src in phi.srcs:
                    if isinstance(src.ref, Value):
                        self.hints.setdefault(phi.dest, []).append(src.ref)
                        self.hints.setdefault(src.ref, []).append(phi.dest)

    def free_region(self, busy: set[int], value: Value, preferred: list[Register]) -> Register:
        width = value.size // 16
        for register in preferred:
            if register.size == value.size and not busy & set(register.halves):
                return register
        for start in range(0, self.bound - width + 1, width):
            halves = set(range(start, start + width))
            if not halves & busy and not halves & self.reserved:
                return Register(start, value.size)
        raise RegisterBoundExceeded(
            f"no free aligned {value.size}-bit register for %{value.name} within "
            f"{self.bound} halves"
        )

    def assign(self, value: Value, busy: set[int], extra: list[Register] = ()) -> Register:
        preferred = list(extra)
        for partner in self.hints.get(value, ()):
            if partner in self.assigned:
                preferred.append(self.assigned[partner])
        register = self.free_region(busy, value, preferred)
        self.assigned[value] = register
        busy.update(register.halves)
        return register

    def count(self, busy: set[int]) -> None:
        self.demand = max(self.demand, len(busy - self.reserved))

    def entry_demand(self, busy: set[int], phis: list) -> None:
        """The demand at a block's entry: its live-ins and its phi destinations, once."""
        self.count(busy)

    def run(self) -> None:
        for block in self.fn.blocks:
            busy: set[int] = set()
            for value in self.liveness.live_in[block]:
                busy.update(self.assigned[value].halves)
            phis = list(block.phis())
            for phi in phis:
                self.assign(phi.dest, busy)
            self.entry_demand(busy, phis)
            body = block.instructions[len(phis):]
            live = self.liveness.live_before(body[0]) if body else self.liveness.live_out[block]
            for phi in phis:
                if phi.dest not in live:  # a dead phi holds its register only on entry
                    busy.difference_update(self.assigned[phi.dest].halves)
            for ins in block.instructions:
                if ins.is_phi:
                    continue
                dying = [v for v in self.liveness.kills.get(ins, ()) if v in self.assigned]
                for value in dying:
                    busy.difference_update(self.assigned[value].halves)
                if isinstance(ins.dest, Value):
                    extra = []
                    if ins.name == "bitop" and ins.srcs and isinstance(ins.srcs[0].ref, Value):
                        source = ins.srcs[0].ref
                        if source in dying and source.size == ins.dest.size:
                            extra.append(self.assigned[source])
                    self.assign(ins.dest, busy, extra)
                    self.count(busy)
                    if ins.dest not in self.liveness.live_after(ins):
                        busy.difference_update(self.assigned[ins.dest].halves)


def allocate(
    fn: Function, bound: int = DEFAULT_BOUND, allocator_class: type[Allocator] = Allocator
) -> Allocation:
    """Assign registers to the values of exec-level `fn` (not changed); see the module."""
    if fn.level != "exec":
        raise ValueError(f"register allocation takes an exec-level function, not {fn.level}")
    allocator = allocator_class(fn, bound)
    allocator.run()
    highest = max((r.half + r.size // 16 - 1 for r in allocator.assigned.values()), default=-1)
    return Allocation(dict(allocator.assigned), allocator.demand, highest, bound)


def rewrite(fn: Function, allocation: Allocation) -> None:
    """Replace every value by its register; `fn` becomes machine level."""
    registers = allocation.registers

    def operand(src: Operand) -> Operand:
        if isinstance(src.ref, Value):
            return src.with_ref(registers[src.ref])
        return src

    for ins in fn.instructions():
        ins.srcs = [operand(src) for src in ins.srcs]
        if isinstance(ins.dest, Value):
            ins.dest = registers[ins.dest]
    fn.level = "machine"


def allocate_for_occupancy(fn: Function, threads: int) -> Allocation:
    return allocate(fn, max_halves_for_threads(threads))


def run_ra(fn: Function, allocator_class: type[Allocator] = Allocator) -> bool:
    allocation = allocate(fn, allocator_class=allocator_class)
    rewrite(fn, allocation)
    fn.notes["demand"] = allocation.demand
    fn.notes["bound"] = allocation.bound
    return True


PASS = Pass("ra", "SSA register allocation (exec to machine), Mesa's agx_ra without spilling", run_ra)
