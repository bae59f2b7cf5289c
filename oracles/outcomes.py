"""What running a program on one input set can end in.

A program's trap is a value (`Undefined`, `OutOfFuel`); a harness bug is an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oracles.refinement_relation import PYTHON, slot_differs, slot_pair


@dataclass(frozen=True)
class Returned:
    """Every thread stopped. `memory` maps each buffer uniform to its final bytes;
    `outputs[t][slot]` is what thread t exported to that slot, or None. `steps`: the most
    instructions one thread executed (the SSA interpreter) or the wave did (the wave
    interpreter); not part of equality, a measure the refinement budget is made from."""

    memory: dict[str, bytes]
    outputs: tuple[tuple[int | None, ...], ...]
    steps: int = field(default=0, compare=False)

    kind = "returned"

    def describe(self) -> str:
        return f"returned ({len(self.outputs)} threads, {len(self.memory)} buffers)"


@dataclass(frozen=True)
class Undefined:
    """Some thread did something with undefined behaviour; `reason` says what, first."""

    reason: str
    thread: int | None = None

    kind = "undefined"

    def describe(self) -> str:
        where = f" in thread {self.thread}" if self.thread is not None else ""
        return f"undefined behaviour{where}: {self.reason}"


@dataclass(frozen=True)
class OutOfFuel:
    """Some thread (the wave, on the wave interpreter) executed more instructions than the
    fuel allowed. `active_steps`: the most instructions one lane had executed while active
    when it ran out (on the SSA interpreter, every instruction a thread runs is active);
    not part of equality. A wave can run long with no lane active (every construct once per
    pass around the loops enclosing it), a lane cannot: docs/guarantees.md."""

    fuel: int
    active_steps: int = field(default=0, compare=False)

    kind = "out_of_fuel"

    def describe(self) -> str:
        return f"out of fuel after {self.fuel} instructions in one thread"


Outcome = Returned | Undefined | OutOfFuel

# The output of a pass gets fuel relative to what its input needed (docs/guarantees.md):
# per instruction the input executed, STEP_FACTOR; per instruction of the output, once
# through with no lane active, STATIC_FACTOR; never less than the run's own fuel. An output
# out of that is run once more with RETRY_FACTOR times as much before it is judged.
STEP_FACTOR = 8
STATIC_FACTOR = 8
RETRY_FACTOR = 16


def output_budget(fuel: int, source_steps: int, output_size: int) -> int:
    """The fuel an output gets where its input returned in `source_steps` (the most
    instructions one of its threads executed) and the output has `output_size`
    instructions: what a correct lowering may add (copies, exec-mask rows, fresh blocks)
    fits in it many times over."""
    return max(fuel, STEP_FACTOR * source_steps + STATIC_FACTOR * output_size)


def ran_away(target: OutOfFuel, budget: int) -> bool:
    """An output out of fuel at RETRY_FACTOR x `budget` is a hang when some lane of it was
    active for more than `budget` instructions: no correct lowering makes one thread do
    that much more than the input did. Otherwise the wave spent its fuel walking code with
    no lane active (legitimate: a nest of loops is walked once per pass around every loop
    enclosing it, quadratic in the depth), and the step is inconclusive."""
    return target.active_steps > budget


def first_difference(
    source: Returned, target: Outcome, names: tuple[str, str] = ("input", "output")
) -> str | None:
    """The first way `target` fails to match `source` (which returned), or None: the
    relation of `oracles.refinement_relation`. Outputs are compared thread by thread and
    slot by slot (a missing slot counts as not written), then memory buffer by buffer."""
    before, after = names
    if not isinstance(target, Returned):
        return f"{before} returned but {after} ended in {target.describe()}"
    if target.outputs == source.outputs and target.memory == source.memory:
        return None  # the common verdict, decided by C-level comparisons (issue 10's profile)
    for thread, (want, got) in enumerate(zip(source.outputs, target.outputs, strict=True)):
        slots = max(len(want), len(got))
        want = tuple(want) + (None,) * (slots - len(want))
        got = tuple(got) + (None,) * (slots - len(got))
        for slot, (a, b) in enumerate(zip(want, got, strict=True)):
            if slot_differs(PYTHON, slot_pair(a), slot_pair(b)):
                shown = [("-" if v is None else f"{v:#x}") for v in (a, b)]
                return f"thread {thread} output slot {slot}: {before} {shown[0]}, {after} {shown[1]}"
    for name, old in source.memory.items():
        new = target.memory[name]
        if old != new:
            offset = next(i for i, (x, y) in enumerate(zip(old, new, strict=True)) if x != y)
            start = offset & ~3
            return (
                f"buffer {name} byte {offset}: {before} {old[start:start + 4].hex()}, "
                f"{after} {new[start:start + 4].hex()}"
            )
    return None
