"""Making the one value a shape's wrong rewrite would change observable.

A program's outputs are its export slots (eight, the last export to a slot wins) and the
output buffer's store sites (`operations.SITES` per thread, each written by one store). A
shape whose wrong rewrite changes a single value (a dropped negation, a skipped rounding, a
saturation seen by a phi, a load moved across a store) shows only if that value reaches an
output intact, and an export to a random slot is often overwritten by a later one. `keep`
exports the value to a slot of its own while four stay free for the other exports (the
program builder moves those off the reserved slots once the program is built:
`program._Program.keep_marker_slots`), else stores it to a site of its own while one is
free (two instructions: the site's index, the store).
"""

from __future__ import annotations

from agxir.ir import Operand
from agxir.opcodes import OPCODES

R = OPCODES
_FREE_SLOTS_LEFT = 4  # export slots `keep` leaves to the other exports


def keep(em, op: Operand) -> None:
    """Makes `op` observable, whole: exported to a slot of its own while enough stay free
    for the other exports, else stored (a 16- or 32-bit value, in its full width) to a site
    of its own while one is free, else exported to any slot (which a later export may
    overwrite). Nothing in a program without outputs."""
    free = [slot for slot in range(8) if slot not in em.marked_slots] if em.f.exports else []
    if len(free) > _FREE_SLOTS_LEFT:
        slot = free[em.below(len(free))]
        em.marked_slots.add(slot)
        em.emit(R["export"], 0, [op], {"slot": slot})
        em.marker_ins.add(id(em.ins[-1]))
    elif not em.store_whole(op) and em.f.exports:
        em.emit(R["export"], 0, [op], {"slot": em.below(8)})
