"""What running a program on one input set can end in.

A program's trap is a value (`Undefined`, `OutOfFuel`); a harness bug is an exception.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Returned:
    """Every thread stopped. `memory` maps each buffer uniform to its final bytes;
    `outputs[t][slot]` is what thread t exported to that slot, or None."""

    memory: dict[str, bytes]
    outputs: tuple[tuple[int | None, ...], ...]

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
    """Some thread executed more instructions than the fuel allowed."""

    fuel: int

    kind = "out_of_fuel"

    def describe(self) -> str:
        return f"out of fuel after {self.fuel} instructions in one thread"


Outcome = Returned | Undefined | OutOfFuel


def first_difference(
    source: Returned, target: Outcome, names: tuple[str, str] = ("input", "output")
) -> str | None:
    """The first way `target` fails to match `source` (which returned), or None. Outputs
    are compared thread by thread and slot by slot (a missing slot counts as not written),
    then memory buffer by buffer."""
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
            if a != b:
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
