"""The pressure invariant: a pass that promises lower register pressure must not raise it.

Worked out from `oracles.liveness_reference` (live sets found by walking back from each
use), not from `agxir.liveness` or the scheduler's own counting. A block's pressure is
the most 16-bit halves live at one of its program points, from the point before its first
non-phi instruction to its end: the measure Mesa's `agx_pressure_schedule` compares
before keeping an order (a destination nobody reads is live nowhere, so it adds nothing).

`block_pressures` gives it per block; `pressure_rise` compares two versions of a function
block by block (the blocks are matched by name; when the names differ, the whole
function's maximum is compared instead) and says where the pressure rose.
"""

from __future__ import annotations

from agxir.ir import Function
from oracles.liveness_reference import ReferenceLiveness, reference_liveness

__all__ = ["block_pressures", "max_point_pressure", "pressure_rise"]


def _first_non_phi(block) -> int:
    return next((i for i, ins in enumerate(block.instructions) if not ins.is_phi),
                len(block.instructions))


def block_pressures(fn: Function, ref: ReferenceLiveness | None = None) -> dict[str, int]:
    """The most halves live at one point of each block (keyed by block name)."""
    ref = ref if ref is not None else reference_liveness(fn)
    pressures: dict[str, int] = {}
    for block in dict.fromkeys(fn.blocks):
        points = range(_first_non_phi(block), len(block.instructions) + 1)
        pressures[block.name] = max(
            sum(value.size // 16 for value in ref.at[(block, p)]) for p in points
        )
    return pressures


def max_point_pressure(fn: Function) -> int:
    """The most halves live at one program point of `fn`."""
    return max(block_pressures(fn).values(), default=0)


def pressure_rise(before: Function, after: Function,
                  refs: tuple[ReferenceLiveness, ReferenceLiveness] | None = None) -> str | None:
    """None when no block of `after` has a higher pressure than the same block of
    `before`; else where it rose and by how much. `refs`: the two functions' reference
    liveness, when the caller has them already."""
    old_ref, new_ref = refs if refs is not None else (None, None)
    old, new = block_pressures(before, old_ref), block_pressures(after, new_ref)
    if old.keys() != new.keys():
        old_max, new_max = max(old.values(), default=0), max(new.values(), default=0)
        if new_max > old_max:
            return f"the maximum register pressure rose from {old_max} to {new_max} halves"
        return None
    for name, pressure in new.items():
        if pressure > old[name]:
            return (f"the register pressure of {name} rose from {old[name]} to {pressure} "
                    f"halves (most halves live at one point)")
    return None
