"""Emitters for the shapes the pressure scheduler (agxir/passes/pressure_schedule.py) must
not break: a load and a store of the same memory in one block.

The program's other loads read only input buffers and its stores write only the output
buffer, so on their own a load and a store never touch the same bytes and no order
between them is observable. `e_reload` reads one of this thread's store slots of the
output buffer (`thread_id * SITES + site`, 4 bytes, race free like a store) before the
store to it, with the stored value computed in between, and half the time reads it again
after the store. A bottom-up scheduler prefers to place the first load last (its
destination frees a register, the store only adds its sources), below the store, and the
order is lower in pressure; only the memory edge keeps the load above the store. What the
loads read is exported just below (the export ends the scheduling region there, so the
load's value is live out of it) and kept (`observe.keep`): a load moved across the store
reads the other value, and an output shows it.
"""

from __future__ import annotations

from agxir.ir import Operand
from agxir.opcodes import OPCODES
from fuzz.generate.observe import keep
from fuzz.generate.operations import SITES, immediate

R = OPCODES


def e_reload(em):
    """load slot; compute a value; store it to the slot; maybe load the slot again."""
    if em.output is None or em.sites_used >= SITES:
        return None
    site = em.sites_used
    em.sites_used += 1
    index = em.emit(R["imad"], 32, [em.tid(), immediate(SITES), immediate(site)], {"shift": 0})
    slot = {"fmt": "i32", "shift": 0}
    base = Operand(em.output)
    earlier = em.value(32)  # drawn first: the stored value must not read the load
    old = em.emit(R["device_load"], 32, [base, index], dict(slot))
    value = em.emit(R["iadd"], 32, [earlier, em.imm8()], {"shift": 0})
    em.emit(R["device_store"], 0, [value, base, index], dict(slot))
    reads = [old]
    if em.below(2):
        reads.append(em.emit(R["device_load"], 32, [base, index], dict(slot)))
    # Below the store: an export between them would end the region and keep them apart.
    if em.f.exports:
        export_slot = em.below(8)
        for read in reads:
            em.emit(R["export"], 0, [read], {"slot": export_slot})
            export_slot = (export_slot + 1) & 7
    for read in reads:
        keep(em, read)
    return old


def schedule_pairs(f) -> list:
    """(emitter, weight) pairs for `families.emitter_pairs`."""
    return [(e_reload, f.loads * f.stores)]
