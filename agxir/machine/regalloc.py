"""Register allocation of an exec-level (SSA) function, modeled on agx_register_allocate.c.

SSA-based, no interference graph: blocks are visited in layout order, which the
control-flow lowering makes a dominance order, so every value is assigned at its definition
before any use. Each block starts from a register map: its live-in values where its first
visited logical predecessor left them (that predecessor's `out_maps`, Mesa's
`reg_to_ssa_out`), then its phi destinations. Within a block, the registers of an
instruction's killed sources are freed before its destination is assigned (a destination
may reuse a dying source).

* Sizes are 1, 2 or 4 halves, naturally aligned (`agxir.machine.ra_file`).
* r0l (half 0) is reserved when the function has control flow.
* Affinities: phi webs (union-find over a phi's destination and sources) share the
  register the web got first; a phi prefers a register one of its sources has; a phi
  source prefers its phi's; a `mov` (bitop tt=mov) prefers its dying source's register.
* When no aligned region is free, the region needing the fewest moves is evicted through a
  `parallel_copy` before the instruction (Mesa's assign_regs_by_copying); at a block's
  entry (placing phis) the eviction only changes the entry map.
* Where a block's entry map differs from where a logical predecessor left a live-in value
  (an eviction in one side of an if, in a loop body, or at the entry), a `parallel_copy` at
  the end of that predecessor, before its trailing control flow, moves it back; it also
  carries that edge's phi moves (the phi then reads its own register there), because the
  two must act in parallel. The lowering leaves no critical edge, so the copy runs for
  exactly the lanes taking the edge.
* The bound is 256 halves, or `max_halves_for_threads(threads)` from the occupancy table,
  or a policy computed from the need (the allocator's demand, r0l included): `ra-demand`
  bounds tightly, at the need rounded up to a quad (Mesa's `AGX_MESA_DEBUG=demand`, whose
  alignment is 8), `ra-occupancy` at the most halves the occupancy of the need allows
  (Mesa's default sizing). No spilling: a demand over the bound raises
  `RegisterBoundExceeded`.
* The paths taken under pressure are counted (`agxir.machine.paths`): evictions (and their
  late-kill and repack fallbacks) and entry fix-ups.

The result keeps register phis (`r4 = phi [r2, b1], [#0, b2]`) for `lower-phis`. Nothing is
reordered and only `parallel_copy`s are inserted, so the RA checker can align the result
with its input. `allocate` returns the demand it counted (the most halves live at once,
r0l aside) in an `Allocation`; the pass records it in `fn.notes`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agxir.cfg import CFG
from agxir.ir import (
    EXEC,
    NUM_HALVES,
    R0L,
    Block,
    Function,
    Instruction,
    Operand,
    Register,
    Value,
    clone_function,
)
from agxir.liveness import Liveness
from agxir.machine.lower_phis import PARALLEL_COPY, trailing_start
from agxir.machine.occupancy import max_halves_for_threads, threads_for_halves
from agxir.machine.paths import reached
from agxir.machine.ra_file import Move, RegisterBoundExceeded, RegisterFile, width
from agxir.opcodes.table import BITOP_ALIASES
from agxir.passes.pass_ import Pass

__all__ = [
    "BOUND_POLICIES", "PASS", "Allocation", "Allocator", "RegisterBoundExceeded", "allocate",
    "demand_bound", "occupancy_bound", "run_ra",
]

DEFAULT_BOUND = 256
CONTROL = frozenset({
    "if_icmp", "if_fcmp", "else_icmp", "else_fcmp", "while_icmp", "while_fcmp",
    "pop_exec", "push_exec", "break", "jmp_exec_any", "jmp_exec_none",
})  # fmt: skip


@dataclass(frozen=True)
class Allocation:
    registers: dict[Value, Register]  # where each value was defined (a split may move it)
    demand: int  # the most halves live at once, as the allocator counted them
    highest_half: int  # the highest half assigned, -1 when none
    bound: int
    copies: int  # parallel copies inserted (evictions and edge fixups)
    function: Function  # the allocated (machine-level) copy of the input


def has_control_flow(fn: Function) -> bool:
    return any(ins.name in CONTROL for ins in fn.instructions())


class _Webs:
    """Union-find over values related by phis (Mesa's phi webs)."""

    def __init__(self) -> None:
        self.parent: dict[Value, Value] = {}
        self.register: dict[Value, Register] = {}

    def find(self, value: Value) -> Value:
        root = value
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        while value is not root:
            parent = self.parent.get(value, value)
            self.parent[value] = root
            value = parent
        return root

    def union(self, a: Value, b: Value) -> None:
        a, b = self.find(a), self.find(b)
        if a is not b:
            self.parent[b] = a


@dataclass
class _Result:
    """What the walk decided, applied to the function only at the end (the liveness
    analysis indexes the original instruction lists)."""

    srcs: dict[Instruction, list[Register | None]] = field(default_factory=dict)
    dests: dict[Instruction, Register] = field(default_factory=dict)
    before: dict[Instruction, list[Move]] = field(default_factory=dict)
    entry: dict[Block, dict[Value, Register]] = field(default_factory=dict)
    out: dict[Block, dict[Value, Register]] = field(default_factory=dict)


class Allocator:
    """The allocator; `LIVENESS` and `entry_demand` are what the bug zoo swaps."""

    LIVENESS: type[Liveness] = Liveness

    def __init__(self, fn: Function, bound: int) -> None:
        self.fn = fn
        self.bound = bound
        self.liveness = self.LIVENESS(fn)
        self.reserved = frozenset({R0L.half}) if has_control_flow(fn) else frozenset()
        self.demand = 0
        self.webs = _Webs()
        self.phi_of_source: dict[Value, list[Instruction]] = {}
        self.defined: dict[Value, Register] = {}
        self.result = _Result()
        for block in fn.blocks:
            for phi in block.phis():
                for src in phi.srcs:
                    if isinstance(src.ref, Value):
                        self.webs.union(phi.dest, src.ref)
                        self.phi_of_source.setdefault(src.ref, []).append(phi)

    # --- demand ----------------------------------------------------------------------------------
    def count(self, busy: set[int]) -> None:
        self.demand = max(self.demand, len(busy - self.reserved))

    def entry_demand(self, busy: set[int], phis: list[Instruction]) -> None:
        """The demand at a block's entry: its live-ins and its phi destinations, once."""
        self.count(busy)

    def check_bound(self) -> None:
        need = self.liveness.max_pressure + len(self.reserved)
        if need > self.bound:
            raise RegisterBoundExceeded(
                f"@{self.fn.name} needs {self.liveness.max_pressure} halves at once"
                f"{' beside r0l' if self.reserved else ''}, over the bound of {self.bound} "
                f"(this model does not spill)"
            )

    # --- choosing a register ---------------------------------------------------------------------
    def preferences(self, ins: Instruction, value: Value, rf: RegisterFile) -> list[Register]:
        wanted: list[Register] = []
        web = self.webs.register.get(self.webs.find(value))
        if web is not None:
            wanted.append(web)
        if ins.name == "bitop" and ins.attrs.get("tt") == BITOP_ALIASES["mov"]:
            source = ins.srcs[0].ref if ins.srcs else None
            if isinstance(source, Value) and source in rf.where:
                wanted.append(rf.where[source])
        if ins.is_phi:
            wanted += [rf.where[s.ref] for s in ins.srcs if isinstance(s.ref, Value) and s.ref in rf.where]
            wanted += [self.defined[s.ref] for s in ins.srcs
                       if isinstance(s.ref, Value) and s.ref in self.defined]
        for phi in self.phi_of_source.get(value, ()):
            if phi.dest in self.defined:
                wanted.append(self.defined[phi.dest])
            wanted += [self.defined[s.ref] for s in phi.srcs
                       if isinstance(s.ref, Value) and s.ref in self.defined]
        return [Register(r.half, value.size) for r in wanted if r.half % width(value) == 0]

    def choose(self, ins: Instruction, value: Value, rf: RegisterFile, protected: set[int]):
        """A free register for `value` (no moves), or one made free by eviction."""
        for register in self.preferences(ins, value, rf):
            if rf.is_free(register):
                rf.place(value, register)
                return register, []
        register = rf.first_free(value)
        if register is not None:
            rf.place(value, register)
            return register, []
        return rf.evict_for(value, protected)

    def note_defined(self, value: Value, register: Register) -> None:
        self.defined[value] = register
        self.webs.register.setdefault(self.webs.find(value), register)

    # --- the walk --------------------------------------------------------------------------------
    def entry_file(self, block: Block, preds: dict[Block, list[Block]]) -> RegisterFile:
        rf = RegisterFile(self.bound, self.reserved)
        visited = [p for p in preds[block] if p in self.result.out]
        source = self.result.out[visited[0]] if visited else {}
        for value in sorted(self.liveness.live_in[block], key=lambda v: v.name):
            register = source.get(value, self.defined.get(value))
            if register is not None and rf.is_free(register):
                rf.place(value, register)
            elif register is not None:  # only a wrong liveness gets here: keep going
                rf.place(value, rf.first_free(value) or rf.evict_for(value, set())[0])
        return rf

    def run_block(self, block: Block, preds: dict[Block, list[Block]]) -> None:
        rf = self.entry_file(block, preds)
        phis = list(block.phis())
        for phi in phis:
            register, moves = self.choose(phi, phi.dest, rf, set())  # moves change only the map
            if moves:
                reached("eviction")
            self.note_defined(phi.dest, register)
        self.result.entry[block] = rf.snapshot()
        for phi in phis:  # an eviction at the entry may have moved an earlier phi
            self.result.dests[phi] = self.defined[phi.dest] = rf.where[phi.dest]
        self.entry_demand(set(rf.owner), phis)
        body = block.instructions[len(phis):]
        live = self.liveness.live_before(body[0]) if body else self.liveness.live_out[block]
        for phi in phis:
            if phi.dest not in live:  # a dead phi holds its register only on entry
                rf.free(phi.dest)
        for ins in body:
            self.run_instruction(ins, rf)
        self.result.out[block] = {
            v: rf.where[v] for v in self.liveness.live_out[block] if v in rf.where
        }

    def run_instruction(self, ins: Instruction, rf: RegisterFile) -> None:
        dying = [v for v in self.liveness.kills.get(ins, ()) if v in rf.where]
        dying_at = {v: rf.where[v] for v in dying}
        for value in dying:
            rf.free(value)
        moves: list[Move] = []
        if isinstance(ins.dest, Value):
            protected = {h for r in dying_at.values() for h in r.halves}
            try:
                register, moves = self.choose(ins, ins.dest, rf, protected)
            except RegisterBoundExceeded:
                if not dying:
                    raise
                # Mesa's way (late kill): the dying sources hold their registers through
                # the instruction and may be moved by the eviction like any other value.
                for value in dying:
                    rf.place(value, dying_at[value])
                try:
                    register, moves = rf.evict_for(ins.dest, set())
                    dying_at = {v: rf.where[v] for v in dying}
                    reached("eviction-late-kill")
                except RegisterBoundExceeded:  # then lay the file out again
                    for value in dying:
                        rf.free(value)
                    register, moves = rf.repack(ins.dest, dying_at)
                    reached("eviction-repack")
                    dying_at = {**dying_at, **{m.value: m.dest for m in moves if m.value in dying_at}}
                for value in dying:
                    rf.free(value)
            self.note_defined(ins.dest, register)
            self.result.dests[ins] = register
            self.count(set(rf.owner))
        if moves:
            reached("eviction")
            self.result.before[ins] = moves
        self.result.srcs[ins] = [
            dying_at.get(src.ref) or rf.where.get(src.ref) or self.defined.get(src.ref)
            if isinstance(src.ref, Value) else None
            for src in ins.srcs
        ]
        if isinstance(ins.dest, Value) and ins.dest not in self.liveness.live_after(ins):
            rf.free(ins.dest)

    def run(self) -> None:
        self.check_bound()
        preds = CFG(self.fn).preds
        for block in self.fn.blocks:
            self.run_block(block, preds)

    # --- applying the result ---------------------------------------------------------------------
    def apply(self) -> int:
        """Rewrite the function with the registers chosen; returns the copies inserted."""
        result = self.result
        copies = 0
        fixups: dict[Block, Instruction] = {}
        phi_sources: dict[tuple[Instruction, int], Register] = {}
        for pred in self.fn.blocks:
            for block in pred.successors:
                copy = self.edge_fixup(pred, block, list(block.phis()), phi_sources)
                if copy is not None:
                    if pred in fixups:
                        raise AssertionError(f"{pred.name} needs copies for two successors")
                    fixups[pred] = copy
        for block in self.fn.blocks:
            out: list[Instruction] = []
            for ins in block.instructions:
                if ins in result.before:
                    out.append(_copy_of(result.before[ins]))
                    copies += 1
                if ins.is_phi:
                    for i, src in enumerate(ins.srcs):
                        if isinstance(src.ref, Value):
                            ins.srcs[i] = src.with_ref(phi_sources[(ins, i)])
                else:
                    registers = result.srcs.get(ins, [None] * len(ins.srcs))
                    ins.srcs = [s.with_ref(r) if r is not None else s
                                for s, r in zip(ins.srcs, registers, strict=True)]
                if isinstance(ins.dest, Value):
                    ins.dest = result.dests[ins]
                out.append(ins)
            if block in fixups:
                out.insert(trailing_start_of(out), fixups[block])
                copies += 1
                reached("entry-fixup")
            block.instructions = out
        self.fn.level = "machine"
        return copies

    def edge_fixup(self, pred: Block, block: Block, phis: list[Instruction],
                   phi_sources: dict[tuple[Instruction, int], Register]) -> Instruction | None:
        """The parallel copy putting `block`'s live-ins where its entry map has them at the
        end of `pred`, with the edge's phi moves; fills the phi sources for the edge."""
        entry, out = self.result.entry[block], self.result.out.get(pred, {})
        moves = [
            Move(v, out[v], entry[v])
            for v in sorted(self.liveness.live_in[block], key=lambda v: v.name)
            if v in out and v in entry and out[v] != entry[v]
        ]
        edge = [(phi, i) for phi in phis for i, b in enumerate(phi.blocks) if b is pred]
        for phi, i in edge:
            source = phi.srcs[i].ref
            if isinstance(source, Value):
                register = out.get(source, self.defined.get(source))
                if moves and register != entry[phi.dest]:
                    moves.append(Move(source, register, entry[phi.dest]))
                    register = entry[phi.dest]
                phi_sources[(phi, i)] = Register(register.half, source.size)
        if not moves:
            return None
        if len(pred.successors) != 1:
            raise AssertionError(f"critical edge {pred.name} -> {block.name} needs copies")
        for ins in pred.instructions[trailing_start(pred):]:
            if any(isinstance(s.ref, Value) for s in ins.srcs):
                raise AssertionError(f"{pred.name}'s trailing control reads a value")
        return _copy_of(moves)


def trailing_start_of(instructions: list[Instruction]) -> int:
    return trailing_start(Block("_", instructions))


def _copy_of(moves: list[Move]) -> Instruction:
    return Instruction(PARALLEL_COPY, None, [Operand(m.source) for m in moves], {}, [], False,
                       [m.dest for m in moves])


QUAD = 4  # halves: the tight bound's rounding, so a 64-bit value always has an aligned quad


def demand_bound(need: int) -> int:
    """`ra-demand`'s bound: the need rounded up to a quad (Mesa's AGX_MESA_DEBUG=demand
    rounds to its register-file alignment, 8 halves; a quad is the tightest that keeps
    every aligned size placeable). A need over the file stays over it."""
    return min(NUM_HALVES, max(QUAD, -(-need // QUAD) * QUAD))


def occupancy_bound(need: int) -> int:
    """`ra-occupancy`'s bound: the most halves the occupancy of the need allows (Mesa's
    default: the demand rounded up to the top of its occupancy step)."""
    threads = threads_for_halves(need)
    return max_halves_for_threads(threads) if threads else NUM_HALVES


# Bounds computed from the need (the most halves live at once, r0l included): by name.
BOUND_POLICIES: dict[str, Callable[[int], int]] = {
    "demand": demand_bound,
    "occupancy": occupancy_bound,
}


def allocate(
    fn: Function,
    bound: int | Callable[[int], int] = DEFAULT_BOUND,
    allocator_class: type[Allocator] = Allocator,
    threads: int | None = None,
) -> Allocation:
    """Allocate registers for exec-level `fn` (not changed): the machine-level result is
    `Allocation.function`. With `threads`, the bound is the occupancy table's for that many
    threads; a callable `bound` computes it from the need (`BOUND_POLICIES`)."""
    if threads is not None:
        bound = max_halves_for_threads(threads)
    return allocate_in_place(clone_function(fn), bound, allocator_class)


def allocate_in_place(
    fn: Function,
    bound: int | Callable[[int], int] = DEFAULT_BOUND,
    allocator_class: type[Allocator] = Allocator,
) -> Allocation:
    """`allocate` without the copy: `fn` itself becomes the machine-level result."""
    if fn.level != EXEC:
        raise ValueError(f"register allocation takes an exec-level function, not {fn.level}")
    if not callable(bound) and not 1 <= bound <= NUM_HALVES:
        raise ValueError(f"a register bound is 1..{NUM_HALVES} halves, not {bound}")
    allocator = allocator_class(fn, DEFAULT_BOUND if callable(bound) else bound)
    if callable(bound):
        allocator.bound = bound(allocator.liveness.max_pressure + len(allocator.reserved))
    allocator.run()
    registers = dict(allocator.defined)
    copies = allocator.apply()
    highest = max(
        (r.half + r.size // 16 - 1 for ins in fn.instructions() for r in ins.defs()
         if isinstance(r, Register) and not (allocator.reserved and r == R0L)),
        default=-1,
    )
    return Allocation(registers, allocator.demand, highest, allocator.bound, copies, fn)


def run_ra(
    fn: Function,
    allocator_class: type[Allocator] = Allocator,
    bound: int | Callable[[int], int] = DEFAULT_BOUND,
) -> bool:
    """The pass: `fn` is allocated in place; the demand and bound go to its notes (the rest
    of the `Allocation` is dropped)."""
    allocation = allocate_in_place(fn, bound, allocator_class)
    fn.notes["demand"] = allocation.demand
    fn.notes["bound"] = allocation.bound
    return True


PASS = Pass("ra", "SSA register allocation (exec to machine), Mesa's agx_ra without spilling", run_ra)
DEMAND_PASS = Pass(
    "ra-demand", "ra bound tightly: the demand rounded up to a quad (Mesa's AGX_MESA_DEBUG=demand)",
    lambda fn: run_ra(fn, bound=demand_bound),
)
OCCUPANCY_PASS = Pass(
    "ra-occupancy", "ra bound to the most halves the demand's occupancy allows (Mesa's sizing)",
    lambda fn: run_ra(fn, bound=occupancy_bound),
)
