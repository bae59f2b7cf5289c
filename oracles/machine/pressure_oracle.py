"""Register demand: reference counts for an exec-level program, and the oracle that holds an
allocation to them.

Both counts are worked out here from `oracles.liveness_reference` (per-point live sets found
by walking back from each use), not from `agxir.liveness` or `agxir.machine.pressure`:

* `reference_demand`: what this project's allocator records (`notes["demand"]`): the most
  16-bit halves occupied at once, at each block entry (live-in values and phi
  destinations) and after each instruction (what is live after it, plus its destination if
  that is dead: a definition occupies a register even so). Killed sources are free for the
  destination (early kill); r0l is not counted.
* `reference_mesa_demand`: Mesa's `agx_calc_register_demand` (late kill, power-of-two
  widths, the reserved r0l, phi destinations counted once through the live-in set), at
  every point (`reference_mesa_points`); `mesa_demand_difference` holds
  `agxir.machine.pressure.demand` to it.

`over_the_register_file` is the independent check behind "not allocatable": an allocator
that gives up (`RegisterBoundExceeded`, no spilling) has declined rightly only when the
reference demand with r0l beside it really exceeds the 256-half file.

`demand_difference` checks an allocation: the demand it reports must equal the reference
(Mesa 8cc96d64 fixed a count that took phis twice; the occupancy follows from it), no
register may reach past the bound it reports, and it must use at least as many distinct
halves as the demand (fewer would mean two values live at once share a register; so the
highest half used is at least the demand, past r0l when it is reserved).
"""

from __future__ import annotations

from agxir.ir import NUM_HALVES, R0L, Function, Register, Value
from agxir.machine.occupancy import threads_for_halves
from agxir.machine.pressure import demand
from agxir.text import format_instruction
from oracles.liveness_reference import ReferenceLiveness, reference_liveness

_CONTROL = frozenset({
    "if_icmp", "if_fcmp", "else_icmp", "else_fcmp", "while_icmp", "while_fcmp",
    "pop_exec", "push_exec", "break", "jmp_exec_any", "jmp_exec_none",
})  # fmt: skip


def _has_control_flow(fn: Function) -> bool:
    return any(ins.name in _CONTROL for ins in fn.instructions())


def _first_non_phi(block) -> int:
    return next((i for i, ins in enumerate(block.instructions) if not ins.is_phi),
                len(block.instructions))


def reference_demand(fn: Function, ref: ReferenceLiveness | None = None) -> int:
    """The demand of exec-level `fn` as the allocator counts it, in halves."""
    ref = ref if ref is not None else reference_liveness(fn)
    demand = 0
    for block in dict.fromkeys(fn.blocks):
        phi_dests = {ins.dest for ins in block.phis() if isinstance(ins.dest, Value)}
        entry = ref.live_in[block] | phi_dests
        demand = max(demand, sum(v.size // 16 for v in entry))
        for index in range(_first_non_phi(block), len(block.instructions)):
            ins = block.instructions[index]
            after = ref.at[(block, index + 1)]
            occupied = sum(v.size // 16 for v in after)
            if isinstance(ins.dest, Value) and ins.dest not in after:
                occupied += ins.dest.size // 16
            demand = max(demand, occupied)
    return demand


def over_the_register_file(exec_fn: Function) -> str | None:
    """Why exec-level `exec_fn` cannot be allocated without spilling (its reference demand,
    plus r0l when it has control flow, exceeds the 256 halves of the register file), or
    None when it fits: an allocator that gives up on it then has crashed. Every bound the
    `ra` passes use is the file or at least the need, so the file is the bound here."""
    demand = reference_demand(exec_fn)
    reserved = 1 if _has_control_flow(exec_fn) else 0
    if demand + reserved <= NUM_HALVES:
        return None
    beside = " (r0l beside them)" if reserved else ""
    return (f"needs {demand} halves at once{beside}, over the register file of "
            f"{NUM_HALVES} halves")


def _mesa_width(value: Value) -> int:
    halves = value.size // 16
    rounded = 1
    while rounded < halves:
        rounded *= 2
    return rounded


def reference_mesa_points(fn: Function, ref: ReferenceLiveness | None = None) -> dict:
    """Mesa's demand of `fn` at each block entry (keyed by the block) and while each non-phi
    instruction executes (keyed by the instruction), from the reference liveness."""
    ref = ref if ref is not None else reference_liveness(fn)
    reserved = 1 if _has_control_flow(fn) else 0
    points: dict = {}
    for block in dict.fromkeys(fn.blocks):
        start = _first_non_phi(block)
        # Mesa's live-in is taken after the phis: the phi destinations the block reads.
        current = reserved + sum(_mesa_width(v) for v in ref.at[(block, start)])
        points[block] = current
        freed_next = 0
        for ins in block.instructions[start:]:
            current -= freed_next
            freed_next = sum(_mesa_width(v) for v in ref.kills[ins])
            for dest in ins.defs():
                if isinstance(dest, Value):
                    current += _mesa_width(dest)
            points[ins] = current
    return points


def reference_mesa_demand(fn: Function, ref: ReferenceLiveness | None = None) -> int:
    """Mesa's demand of `fn` (see the module), from the reference liveness."""
    return max(reference_mesa_points(fn, ref).values(), default=0)


def mesa_demand_difference(fn: Function) -> str | None:
    """None when `agxir.machine.pressure.demand` agrees with the reference at every point of
    SSA- or exec-level `fn`; else the first point where it does not."""
    got = demand(fn)
    for key, want in reference_mesa_points(fn).items():
        if hasattr(key, "instructions"):
            where, have = f"the entry of {key.name}", got.entry.get(key)
        else:
            where, have = f"`{format_instruction(key)}`", got.at.get(key)
        if have != want:
            return f"Mesa's demand at {where} is {have} halves, the reference {want}"
    return None


def halves_used(fn: Function) -> set[int]:
    """Every half a machine-level function names, r0l aside when it is the exec counter."""
    counter = _has_control_flow(fn)
    used: set[int] = set()
    for ins in fn.instructions():
        for ref in [src.ref for src in ins.srcs] + ins.defs():
            if isinstance(ref, Register) and not (counter and ref == R0L):
                used.update(ref.halves)
    return used


def demand_difference(
    exec_fn: Function, allocated: Function, reported_demand: int | None = None,
    ref: ReferenceLiveness | None = None,
) -> str | None:
    """None when the allocation of `exec_fn` is within what its demand allows; else what is
    wrong. `reported_demand` defaults to what the allocator recorded in `allocated.notes`;
    `ref`, `exec_fn`'s reference liveness when the caller has it already."""
    expected = reference_demand(exec_fn, ref)
    reported = allocated.notes.get("demand") if reported_demand is None else reported_demand
    if reported is None:
        return "the allocation does not record its demand"
    if reported != expected:
        return (f"the allocator counted a demand of {reported} halves, the reference "
                f"{expected} (threads {threads_for_halves(reported)} instead of "
                f"{threads_for_halves(expected)})")
    used = halves_used(allocated)
    bound = allocated.notes.get("bound", 256)
    if used and max(used) >= bound:
        return f"register h{max(used)} is beyond the bound of {bound} halves"
    if len(used) < expected:
        return f"{len(used)} halves used for a demand of {expected}: live values share a register"
    # Distinct halves at least the demand puts the highest half used at or above it too.
    return None
