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
