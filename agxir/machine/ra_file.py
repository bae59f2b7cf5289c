"""The register file the SSA allocator (`agxir.machine.regalloc`) works on: which value owns
each 16-bit half, first-fit search for a naturally aligned free region, and live-range
splitting by eviction when none is free.

Eviction is Mesa's `assign_regs_by_copying` (agx_register_allocate.c): the value to place
takes the aligned region of its size that needs the fewest moves (one with at least one
free half); the values it displaces go on a worklist, largest first, and each takes a
region the same way, never one already taken by this eviction. Because sizes are 1, 2 or 4
halves and naturally aligned, a region with a free half only holds values that lie wholly
inside it, so every displaced value moves whole. The caller turns the moves into one
`parallel_copy` (or, at a block's entry, into a changed entry map).

`protected` halves are those of the instruction's sources that die at it: the value being
placed (its destination) may take them, since the instruction reads them first, but a
displaced value may not land on them, since its copy runs before the instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir.ir import Register, Value


class RegisterBoundExceeded(Exception):
    """More halves are needed at once than the bound allows (no spilling in this model)."""


def width(value: Value) -> int:
    """Halves a value occupies: its size in halves (16/32/64 bits are powers of two)."""
    return max(1, value.size // 16)


@dataclass(frozen=True)
class Move:
    value: Value
    source: Register
    dest: Register


class RegisterFile:
    """Halves 0..bound-1; `reserved` halves (r0l under control flow) are never handed out."""

    def __init__(self, bound: int, reserved: frozenset[int]) -> None:
        self.bound = bound
        self.reserved = reserved
        self.owner: dict[int, Value] = {}
        self.where: dict[Value, Register] = {}

    # --- bookkeeping -----------------------------------------------------------------------------
    def place(self, value: Value, register: Register) -> None:
        for half in register.halves:
            if half in self.owner or half in self.reserved or half >= self.bound:
                raise AssertionError(f"h{half} is not free for %{value.name}")
            self.owner[half] = value
        self.where[value] = register

    def free(self, value: Value) -> None:
        register = self.where.pop(value, None)
        if register is not None:
            for half in register.halves:
                if self.owner.get(half) is value:
                    del self.owner[half]

    def busy(self) -> int:
        return len(self.owner)

    def snapshot(self) -> dict[Value, Register]:
        return dict(self.where)

    # --- search ----------------------------------------------------------------------------------
    def is_free(self, register: Register, blocked: set[int] | frozenset[int] = frozenset()) -> bool:
        return (
            register.aligned
            and register.half + register.size // 16 <= self.bound
            and all(
                h not in self.owner and h not in self.reserved and h not in blocked
                for h in register.halves
            )
        )

    def first_free(self, value: Value) -> Register | None:
        size, owner, reserved = width(value), self.owner, self.reserved
        for start in range(0, self.bound - size + 1, size):
            for half in range(start, start + size):
                if half in owner or half in reserved:
                    break
            else:
                return Register(start, value.size)
        return None

    def _regions(self, size: int, excluded: set[int]) -> list[int]:
        """Aligned regions of `size` halves outside `excluded` and the reserved halves with at
        least one free half, fewest owned halves first (Mesa's find_best_region_to_evict
        takes the first)."""
        found: list[tuple[int, int]] = []
        for base in range(0, self.bound - size + 1, size):
            halves = range(base, base + size)
            if any(h in excluded or h in self.reserved for h in halves):
                continue
            moves = sum(1 for h in halves if h in self.owner)
            if moves < size:
                found.append((moves, base))
        return [base for _, base in sorted(found)]

    def evict_for(self, value: Value, protected: set[int]) -> tuple[Register, list[Move]]:
        """Place `value` by displacing others; returns its register and the moves of the
        displaced values (sources are their old registers). Mesa's choice of region comes
        first; when the displaced values then find no room (the protected halves of dying
        sources are free only for `value`), the next region is tried. Raises
        RegisterBoundExceeded when no arrangement is found within the bound."""
        for base in self._regions(width(value), set()):
            saved = dict(self.owner), dict(self.where)
            try:
                return self._evict_into(value, base, protected)
            except RegisterBoundExceeded:
                self.owner, self.where = saved
        raise RegisterBoundExceeded(
            f"no aligned {value.size}-bit register for %{value.name} within {self.bound} "
            f"halves, even by moving other values"
        )

    def repack(self, value: Value, dying: dict[Value, Register]) -> tuple[Register, list[Move]]:
        """The last resort when eviction finds no room: lay the whole file out again. The
        live values and `value` are packed largest first into the lowest aligned free
        regions; then the `dying` sources (not in the file: freed for `value`) are packed
        where no live value is, `value`'s register included, since the instruction reads
        them before it writes. Returns `value`'s register and the moves of every live or
        dying value that changed place (dying ones included, so the instruction reads them
        where the copy put them: see `self.where` after the call for the live ones)."""
        live = sorted(self.where, key=lambda v: (-width(v), self.where[v].half))
        order = sorted([*live, value], key=lambda v: -width(v))
        owner: dict[int, Value] = {}

        def pack(item: Value, blocked: dict[int, Value]) -> Register:
            size = width(item)
            for base in range(0, self.bound - size + 1, size):
                halves = range(base, base + size)
                if not any(h in blocked or h in self.reserved for h in halves):
                    return Register(base, item.size)
            raise RegisterBoundExceeded(
                f"no aligned {item.size}-bit register for %{item.name} within {self.bound} "
                f"halves, even by moving other values"
            )

        placed: dict[Value, Register] = {}
        for item in order:
            placed[item] = pack(item, owner)
            owner.update(dict.fromkeys(placed[item].halves, item))
        dest_halves = set(placed[value].halves)
        others = {h: v for h, v in owner.items() if h not in dest_halves}
        for item in sorted(dying, key=lambda v: (-width(v), dying[v].half)):
            placed[item] = pack(item, others)
            others.update(dict.fromkeys(placed[item].halves, item))
        moves = [Move(v, old, placed[v]) for v, old in [*((v, self.where[v]) for v in live),
                                                         *dying.items()] if placed[v] != old]
        self.owner = {h: v for h, v in owner.items()}
        self.where = {v: placed[v] for v in [*live, value]}
        return placed[value], moves

    def _evict_into(self, value: Value, base: int, protected: set[int]) -> tuple[Register, list[Move]]:
        taken: set[int] = set()
        worklist: list[Value] = []
        moves: list[Move] = []
        current: Value | None = value
        while current is not None:
            size = width(current)
            if current is not value:
                regions = self._regions(size, taken | protected)
                if not regions:
                    raise RegisterBoundExceeded(f"no room for %{current.name}")
                base = regions[0]
            displaced = sorted({self.owner[h] for h in range(base, base + size) if h in self.owner},
                               key=lambda v: self.where[v].half)
            for other in displaced:
                old = self.where[other]
                if not (base <= old.half and old.half + width(other) <= base + size):
                    raise AssertionError("a displaced value must lie inside the region")
                for half in old.halves:
                    del self.owner[half]
                worklist.append(other)
            old_register = self.where.pop(current, None)
            register = Register(base, current.size)
            for half in register.halves:
                self.owner[half] = current
            self.where[current] = register
            taken.update(register.halves)
            if current is not value:
                moves.append(Move(current, old_register, register))
            worklist.sort(key=width)
            current = worklist.pop() if worklist else None
        return self.where[value], moves
