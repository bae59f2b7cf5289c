"""Emitters for the shapes the pressure scheduler (agxir/passes/pressure_schedule.py) must
not break: a load and a store of the same memory in one block.

The program's other loads read only input buffers and its stores write only the output
buffer, so on their own a load and a store never touch the same bytes and no order
between them is observable. `e_reload` reads one of this thread's store slots of the
output buffer (`thread_id * SITES + site`, 4 bytes, race free like a store) before the
store to it, with the stored value computed in between (two adds of values drawn before
the load, so the load's value is live across them), and half the time reads it again
after the store. A bottom-up scheduler prefers to place the first load last (its
destination frees a register, the store only adds its sources), below the store, and the
order is lower in pressure; only the memory edge keeps the load above the store. An
export just above starts a scheduling region there, so the region's highest pressure
is most often where the load's value is live, and the wrong order lowers it. What the
loads read is kept (`observe.keep`) just below, by an export to a slot of its own (which
ends the scheduling region there, so the load's value is live out of it; when the value is
kept by a store, an export follows to end the region): a load moved across the store reads
the other value, and an output shows it.
"""

from __future__ import annotations

from agxir.ir import Operand
from agxir.opcodes import OPCODES
from fuzz.generate.observe import keep
from fuzz.generate.operations import SITES, immediate

R = OPCODES


def e_reload(em):
    """export; load slot; compute a value; store it to the slot; maybe load the slot
    again; keep what the loads read."""
    if em.output is None or em.sites_used >= SITES:
        return None
    site = em.sites_used
    em.sites_used += 1
    # drawn first: the stored value must not read the load
    earlier, other = em.value(32), em.value(32)
    if em.f.exports:
        em.emit(R["export"], 0, [earlier], {"slot": em.below(8)})
    index = em.emit(R["imad"], 32, [em.tid(), immediate(SITES), immediate(site)], {"shift": 0})
    slot = {"fmt": "i32", "shift": 0}
    base = Operand(em.output)
    old = em.emit(R["device_load"], 32, [base, index], dict(slot))
    partial = em.emit(R["iadd"], 32, [earlier, em.imm8()], {"shift": 0})
    value = em.emit(R["iadd"], 32, [partial, other], {"shift": 0})
    em.emit(R["device_store"], 0, [value, base, index], dict(slot))
    reads = [old]
    if em.below(2):
        reads.append(em.emit(R["device_load"], 32, [base, index], dict(slot)))
    # Below the store: an export between them would end the region and keep them apart.
    for read in reads:
        keep(em, read)
    if em.f.exports and em.ins[-1].name != "export":  # kept by a store: end the region
        em.emit(R["export"], 0, [old], {"slot": em.below(8)})
    return old


def schedule_pairs(f) -> list:
    """(emitter, weight) pairs for `families.emitter_pairs`."""
    return [(e_reload, f.loads * f.stores)]
