"""Emitters for the shapes compare/select fusion (agxir/passes/cmpsel.py) and copy
propagation through movs (agxir/passes/copyprop.py) rewrite, and their near misses.

Each function takes the program's `operations.Emitter` and appends a small cluster:

- `e_cmpsel_fusion`: an icmp/fcmp result `t` read by `icmpsel t, #0, x, y cond=ueq` (the
  fusable select), 5 times in 14 a near miss instead: a select that also means `t == 0`
  (`seq #0`: any fusion of it is right), or one that does not (`ueq #1`, `ueq #2`: a
  fusion ignoring the select's second source; `ugt #0`, `ult #0`: one ignoring its
  condition). Those last have two different payloads and are kept (`observe.keep`): a
  wrong fusion changes just that value.
- `e_mov_chain`: chains of movs (`bitop x, #0 tt=0xa`, now and then a `not`) of a value, of
  a uniform, of a narrower value (zero-extending with `.abs`, then often read by a 32-bit
  float op; or sign-extending, mostly a negative constant, read by an integer add), of an
  immediate (read through `.neg` by an add: Mesa 3a87d2cf); a mov of a buffer uniform
  becomes a load base. The reads a wrong copy would change are kept; the other chains end
  in `consume`.
- `consume`: a use of a value as a source of another kind (float, compare, select payload,
  integer, export), which copy propagation through movs must get right.

Plugged in by `families.emitter_pairs`, in the place the base families had them.
"""

from __future__ import annotations

from agxir.ir import Operand
from agxir.opcodes import OPCODES
from fuzz.generate.observe import keep
from fuzz.generate.operations import IMM0, immediate, plans
from fuzz.generate.optimizer_shapes import ordinary_float

R = OPCODES
_PLAIN_SELECTS = 9  # of 14: the fusable select; the rest are _NEAR_MISSES
# (cond, second source): t is an icmp/fcmp result, 0 or 1. The first means t == 0 as
# ueq #0 does; from _KEPT_NEAR_MISS on they do not, so fusing them changes the select.
_NEAR_MISSES = (("seq", 0), ("ueq", 1), ("ueq", 2), ("ugt", 0), ("ult", 0))
_KEPT_NEAR_MISS = 1


def e_cmpsel_fusion(em):
    """icmp/fcmp t feeding icmpsel t, #0, x, y cond=ueq, or a near miss (see the module)."""
    t = em.compare_result()
    size = em.any_size()
    x, y = em.payload(size), em.payload(size)
    r = em.below(14)
    if r < _PLAIN_SELECTS:
        return em.emit(R["icmpsel"], size, [t, IMM0, x, y], {"cond": "ueq"})
    cond, k = _NEAR_MISSES[r - _PLAIN_SELECTS]
    if r - _PLAIN_SELECTS < _KEPT_NEAR_MISS:
        return em.emit(R["icmpsel"], size, [t, immediate(k), x, y], {"cond": cond})
    if y == x:  # two payloads, so that which one the select picks shows
        y = immediate((x.ref.bits + 1) & 0xFF) if x.is_immediate else em.imm8()
    keep(em, em.emit(R["icmpsel"], size, [t, immediate(k), x, y], {"cond": cond}))
    return None


def _narrow_source(em, size: int):
    """(operand, extension) for a mov to `size` of a narrower value x: x.abs, "float" (an
    ordinary f16, for a float op) or "zero" (2 in 3), else x, "sign", mostly a negative
    constant (where sign and zero extension differ)."""
    below = em.below
    narrow = [s for s in em.sizes if s < size]
    width = narrow[below(len(narrow))]
    pool = em.pools[width]
    if not pool:
        return None, None
    src = em.recent(pool)
    if em.use_mods and below(3):
        if width == 16 and size == 32 and em.f.floats and below(8):
            # an ordinary f16, whose zext is a 32-bit denormal: read by a float op, kept
            return Operand(ordinary_float(em, 16).ref, True, False), "float"
        return Operand(src.ref, True, False), "zero"
    if below(4):
        src = em.emit(R["mov_imm"], width, [], {"value": (1 << width) - 1 - below(256)})
    return src, "sign"


def e_mov_chain(em):
    """Chains of movs and what reads them (see the module)."""
    below = em.below
    sizes = em.sizes
    size = em.any_size()
    r = below(7)
    src = extension = None
    if r == 1 and em.f.uniforms:
        options = [u for s in sizes if s <= size for u in em.scalars[s]]
        if size == 64 and em.inputs and below(2):
            buffer = em.inputs[below(len(em.inputs))]
            op = em.emit(R["bitop"], 64, [Operand(buffer), IMM0], {"tt": 0xA})
            em.addrs.append((op, buffer, 0, 1 << 16))
            return op
        if options:
            src = options[below(len(options))]
    elif r in (2, 4, 6) and len(sizes) > 1:
        wider = sizes[1:]  # than the narrowest; 32 bits most often (a store can keep them)
        size = wider[0] if below(3) else wider[-1]
        src, extension = _narrow_source(em, size)
    elif r in (3, 5) and em.use_imm:
        src = em.imm8()  # a mov of an immediate: copyprop may inline it, never through .neg
    if src is None:
        src = em.value(size)
    of_immediate = src.is_immediate
    for _ in range(1 + below(2)):
        tt = 0x5 if below(8) == 7 else 0xA  # now and then a `not`, for the not-fusion
        src = em.emit(R["bitop"], size, [src, IMM0], {"tt": tt})
    if of_immediate and em.use_mods and below(8):
        negated = Operand(src.ref, False, True)  # iadd's second source takes .neg
        keep(em, em.emit(R["iadd"], size, [em.value(size), negated], em.attrs(R["iadd"], size)))
        return None
    if extension == "sign":
        # An integer add that could read the narrow value with .abs if the mov had
        # zero-extended it; kept, since a wrong copy changes just this sum.
        keep(em, em.emit(R["iadd"], size, [src, em.value(size)], {"shift": 0}))
        return None
    if extension == "float":
        # A float op reading zext(x): the narrow x copied into it would be read as an f16.
        row = R["fmul"] if below(2) else R["fadd"]
        keep(em, em.emit(row, 32, [src, ordinary_float(em, 32)], {}))
        return None
    if em.f.floats and size != 64 and below(4) == 3:
        src = em.emit(R["fmov"], size, [src], {})  # fmov forward
    return consume(em, src) if below(3) else src


def consume(em, op: Operand):
    """Uses `op` at once as a source of another kind: float, compare, select payload,
    integer or export (what copy propagation through movs must get right)."""
    size = op.ref.size
    r = em.below(5)
    if r == 0 and size != 64 and em.f.floats:
        return em.generic(R["fmul"] if em.below(2) else R["fadd"], size, op)
    if r == 1 and em.f.compares:
        compare = em.emit(R["icmp"], 32, [op, em.operand(plans(R["icmp"], 32, em.sizes)[1])],
                          em.attrs(R["icmp"], 32))  # fmt: skip
        em.cmps.append(compare)
        return compare
    if r == 2:
        srcs = [em.compare_result(), IMM0, op, em.payload(size)]
        if em.below(2):
            srcs[2], srcs[3] = srcs[3], srcs[2]
        return em.emit(R["icmpsel"], size, srcs, {"cond": "ueq"})
    if r == 3 and em.f.exports:
        return em.emit(R["export"], 0, [op], {"slot": em.below(8)})
    return em.generic(R["iadd"], size, op)
