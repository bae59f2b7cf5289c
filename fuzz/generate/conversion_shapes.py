"""Emitters for the shape `reuse-conversion` (seed 002) rewrites, and its near misses.

`e_narrowing` takes the program's `operations.Emitter` and appends a 32-to-16-bit
`convert` whose result is read (a 16-bit float op, a conversion back to 32 bits, or an
export), with a source that is

- fresh and read nowhere else (it dies at the conversion: the pass fires);
- a value already in the pools, not offered again (often defined before the loop the
  conversion sits in, so the next iteration reads it: a back edge the pass must see);
- a value already in the pools and offered again as the newest (read later in the block,
  in a later block, or by an out-of-SSA copy of a phi at the block's end: the pass must
  decline);
- fresh, and read only by a phi source at the end of the block (`Emitter.phi_offer`): its
  last read is an out-of-SSA parallel copy, which the pass must count.

Plugged in by `families.emitter_pairs` through `conversion_pairs`.
"""

from __future__ import annotations

from agxir.ir import Operand
from agxir.opcodes import OPCODES
from fuzz.generate.operations import plans

R = OPCODES


def _float_value(em, size: int) -> Operand:
    plan = plans(R["fadd"], size, em.sizes)[0]
    return em.operand(((size,), None, plan[2], 0))


def _fresh_source(em) -> Operand:
    """A new 32-bit value: a float op when floats are on, else an integer add."""
    if em.f.floats and em.below(3):
        row = R["fadd"] if em.below(2) else R["fmul"]
        return em.emit(row, 32, [em.value(32), _float_value(em, 32)], {})
    return em.emit(R["iadd"], 32, [em.value(32), em.imm8()], {"shift": 0})


def _read(em, h: Operand) -> Operand | None:
    """Reads the 16-bit result, so a wrong value reaches an output or a later value."""
    r = em.below(4)
    if r == 0 and em.f.floats:
        return em.emit(R["fadd"], 16, [h, _float_value(em, 16)], {})
    if r == 1 and em.f.floats:
        return em.emit(R["convert"], 32, [h], {"mode": "f2f"})
    if r == 2 and em.f.exports:
        em.emit(R["export"], 0, [h], {"slot": em.below(8)})
        return h
    return em.emit(R["iadd"], 16, [h, em.value(16)], {"shift": 0})


def e_narrowing(em):
    if 16 not in em.sizes or not em.f.conversions:
        return None
    below = em.below
    kind = below(4)
    if kind in (0, 3):
        source = _fresh_source(em)
    else:
        source = em.value(32)
    modes = ("f2f", "f2u", "f2s", "u2f", "s2f") if em.f.floats else ("u2f", "s2f")
    h = em.emit(R["convert"], 16, [Operand(source.ref)], {"mode": modes[below(len(modes))]})
    pool = em.pools[32]
    if kind in (0, 3) and source in pool:
        pool.remove(source)  # read nowhere else: it dies at the conversion
    if kind == 2:
        pool.append(source)  # the newest again: later readers and phis take it
    elif kind == 3:
        em.phi_offer = source  # or only by a phi copy at the block's end (Mesa FsatWithPhi)
    result = _read(em, h)
    if result is not None and em.f.exports and below(2):
        em.emit(R["export"], 0, [result], {"slot": below(8)})
    return result


def conversion_pairs(f) -> list:
    """(emitter, weight) pairs for `families.emitter_pairs`."""
    return [(e_narrowing, 3 * f.conversions * f.values16)]
