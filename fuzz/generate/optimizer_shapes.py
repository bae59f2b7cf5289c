"""Emitters for the shapes Mesa's optimizer rewrites (agxir/passes/fmov_prop.py, fmov_rev.py,
inline_imm.py, not_fusion.py, ext_prop.py, shift_fuse.py), and their near misses.

Each function takes the program's `operations.Emitter` and appends a small cluster whose
values stay in the pools, so later instructions, phis and the exports read them:

- `e_float_move`: fmov/convert f2f with modifiers read by float ops, float compares (with
  the reader's own modifiers: neg of neg, abs of neg) and fcmpsel payloads; fmov(.sat) of a
  float op at the same width (the fsat fusion), at twice its width (the inexact widening),
  and with the producer offered again to phis and later readers (a second use). The
  copies read negated and the widened ops compute on ordinary floats (`ordinary_float`,
  `float_constant`: a pool value is often an integer's bits, a float that is zero, tiny or
  NaN, on which a wrong sign or rounding hardly shows), and their results are kept
  (`observe.keep`).
- `e_imm_source`: mov_imm of small, small negative, minifloat and wide values read by
  iadd/imad (often through `.neg`, then half the time a small value, kept), bitops and
  float ops.
- `e_not_use`: `not` read by bitops, and bitops read by `not`.
- `e_shift_add`: `bfi #0, x, #s` (a left shift) as the addend of iadd/imad, often negated.
- `e_extension`: signext/u2u64/i2i64 read by integer ops (and by float ops: a near miss).
- `e_ballot`: ballots of icmp/fcmp results (whose compare sometimes has a second use), of
  other values and of constants, most numbered like a compare (`ballot #k` beside `%k`,
  Mesa BallotConstant; kept), and icmp_ballot/fcmp_ballot. Mostly in the entry block, where the
  wave has not diverged; one time in eight elsewhere, where the ballot is undefined for
  the input sets whose wave diverged and has not rejoined (oracles/interp/lanes.py).
- `e_uadd_sat`: uadd_sat of full-width values and near-maximal constants, mostly with
  `.abs` on both sources (Mesa's uadd_sat), sometimes read through a mov_imm or signext.
"""

from __future__ import annotations

from agxir.ir import Operand
from agxir.opcodes import OPCODES
from agxir.opcodes.operands import float_to_bits, minifloat_value
from fuzz.generate.observe import keep
from fuzz.generate.operations import IMM0, immediate, plans

R = OPCODES
_FLOAT_OPS = ("fadd", "fmul", "ffma", "fmov")
_MINIFLOATS = (0x30, 0x20, 0xB0, 0x40, 0x7F, 0x38, 0x00, 0x80)


def _float_value(em, size: int) -> Operand:
    plan = plans(R["fadd"], size, em.sizes)[0]
    return em.operand(((size,), None, plan[2], 0))


def ordinary_float(em, size: int) -> Operand:
    """A value holding an ordinary float (finite, mostly non-zero, with mantissa bits that
    rounding to a narrower float loses): a float uniform, an integer converted to float,
    or a constant. A pool value is often an integer's bits, which as a float is zero, a
    denormal or a NaN (a ballot of every lane), where a dropped negation or a skipped
    rounding shows in the sign of a zero at most, or not at all."""
    below = em.below
    r = below(4)
    scalars = em.scalars[size]
    if r == 0 and scalars:
        return scalars[below(len(scalars))]
    if r == 1 and em.f.conversions:  # differs per lane: the pool's newest integers
        source = em.any_size() if size == 32 else 16
        return em.emit(R["convert"], size, [em.value(source)], {"mode": ("u2f", "s2f")[below(2)]})
    if r == 2:
        return _float_value(em, size)
    return float_constant(em, size)


def float_constant(em, size: int) -> Operand:
    """A float constant of random sign, an exponent within 2^-7..2^7 and random mantissa
    bits: its sums and products with most floats need rounding."""
    mantissa, bias = (10, 15) if size == 16 else (23, 127)
    bits = (em.below(2) << (size - 1)) | ((bias - 7 + em.below(15)) << mantissa)
    return em.emit(R["mov_imm"], size, [], {"value": bits | em.source.bits(mantissa)})


def _modified(em, op: Operand, p: int = 2) -> Operand:
    """`op` with random float modifiers, about one time in `p`."""
    if not em.use_mods or em.below(p):
        return op
    r = em.below(3)
    return Operand(op.ref, r != 1, r != 0)


def _float_reader(em, t: Operand, size: int) -> Operand:
    """A float op or compare reading t (with its own modifiers, if it has none yet)."""
    r = em.below(5)
    t = t if t.abs or t.neg else _modified(em, t)
    other = _float_value(em, size)
    if r == 0 and em.f.compares:
        compare = em.emit(R["fcmp"], 16 if 16 in em.sizes else 32, [t, other],
                          em.attrs(R["fcmp"], 32))
        em.cmps.append(compare)
        return compare
    if r == 1:
        return em.emit(R["ffma"], size, [other, t, _float_value(em, size)], {})
    row = R["fadd"] if r == 2 else R["fmul"]
    srcs = [t, other] if em.below(2) else [other, t]
    return em.emit(row, size, srcs, {}, sat=em.use_mods and em.below(8) == 0)


def _observed(em, op):
    """Half the time, export `op` at once: a rewrite's result must reach an output for a
    wrong one to show, and values computed early are often never read again."""
    if op is not None and em.f.exports and em.below(2):
        em.emit(R["export"], 0, [op], {"slot": em.below(8)})
    return op


def e_float_move(em):
    return _observed(em, _float_move(em))


def _float_move(em):
    below = em.below
    alu = em.alu_sizes
    size = alu[below(len(alu))]
    r = below(10)
    if r <= 3:  # fmov with modifiers, read by a float op or compare, or a payload
        if r in (1, 2) and em.use_mods:  # read negated: neg of neg (Mesa 095415cd), abs of neg
            x = ordinary_float(em, size)
            t = em.emit(R["fmov"], size, [Operand(x.ref, below(3) == 0, True)], {})
            keep(em, _float_reader(em, Operand(t.ref, below(3) == 0, True), size))
            return None  # kept: the sign is all a wrong composition changes
        x = ordinary_float(em, size) if below(2) else _float_value(em, size)
        t = em.emit(R["fmov"], size, [_modified(em, x, 1)], {})
        if r in (0, 3):  # kept: a payload read without the fmov's modifiers changes just this
            a, b = _float_value(em, size), _float_value(em, size)
            payloads = [t, em.value(size)] if below(2) else [em.value(size), t]
            keep(em, em.emit(R["fcmpsel"], size, [a, b, *payloads], em.attrs(R["fcmpsel"], size)))
            return None
        return _float_reader(em, t, size)
    if r == 4 and 16 in em.sizes:  # f16 -> f32 moves and converts into 32-bit readers
        x = _float_value(em, 16)
        if below(2):
            t = em.emit(R["convert"], 32, [Operand(x.ref) if not x.is_immediate else em.value(16)],
                        {"mode": "f2f"})
        else:
            t = em.emit(R["fmov"], 32, [_modified(em, x)], {})
        return _float_reader(em, t, 32)
    # A float op read by fmov(.sat): at its width, or widened from 16 bits (of ordinary
    # floats, whose sum or product f16 must round: Mesa 3a0d1f83's inexact widening).
    widened = r in (5, 6) and 16 in em.sizes
    width = 16 if widened else size
    op = _FLOAT_OPS[below(3)]
    row = R[op]
    if widened:  # a constant that makes f16 round, saturated one time in three (a clamp
        # to 0 or 1 would hide the rounding)
        srcs = [float_constant(em, 16)] + [ordinary_float(em, 16) for _ in row.srcs[1:]]
        sat = below(3) == 0
    else:
        srcs = [_float_value(em, width) for _ in row.srcs]
        sat = below(3) != 0
    produced = em.emit(row, width, srcs, {})
    out_size = 32 if widened else width
    moved = em.emit(R["fmov"], out_size, [produced], {}, sat=sat)
    if widened:
        keep(em, moved)  # kept: only the rounding differs
        return None
    if r >= 8:
        em.pools[width].append(produced)  # newest again: phis and later readers take it
    return moved


def _imm_value(em, size: int) -> int:
    below = em.below
    r = below(6)
    if r == 0:
        return below(256)
    if r == 1:
        return (1 << size) - 1 - below(255)
    if r == 2 and size != 64:
        return float_to_bits(minifloat_value(_MINIFLOATS[below(len(_MINIFLOATS))]), size)
    if r == 3:
        return (1 << size) - 256 - below(256)  # just past the neg family
    if r == 4:
        return 256 + below(256)  # just past the 8-bit family
    return em.source.bits(size)


def e_imm_source(em):
    return _observed(em, _imm_source(em))


def _imm_source(em):
    below = em.below
    size = em.any_size()
    r = below(5)
    negated = r <= 1 and em.use_mods and below(2) == 0
    # Read through .neg, a small constant half the time: not the neg family's value, so
    # only the plain mov_imm may be inlined, and then with the negation (Mesa 3a87d2cf).
    value = below(256) if negated and below(2) else _imm_value(em, size)
    k = em.emit(R["mov_imm"], size, [], {"value": value})
    if r == 4 and size != 64 and em.f.floats:
        return em.emit(R["fadd"], size, [_modified(em, k), _float_value(em, size)], {})
    use = Operand(k.ref, False, negated)
    if r == 0:
        read = em.emit(R["iadd"], size, [em.value(size), use], {"shift": 0})
    elif r == 1:
        read = em.emit(R["imad"], size, [em.value(size), em.value(size), use], {"shift": 0})
    if r <= 1 and negated:
        keep(em, read)  # kept: a dropped negation changes just this sum
        return None
    if r <= 1:
        return read
    if r == 2:
        return em.emit(R["iadd"], size, [k, em.value(size)], {"shift": below(5)})
    return em.emit(R["bitop"], size, [em.value(size), k], {"tt": below(16)})


def e_not_use(em):
    return _observed(em, _not_use(em))


def _not_use(em):
    below = em.below
    size = em.any_size()
    if below(2):
        n = em.emit(R["bitop"], size, [em.value(size), IMM0], {"tt": 0x5})
        other = em.value(size) if below(3) else em.emit(R["bitop"], size, [em.value(size), IMM0],
                                                         {"tt": 0x5})
        srcs = [n, other] if below(2) else [other, n]
        return em.emit(R["bitop"], size, srcs, {"tt": below(16)})
    inner = em.emit(R["bitop"], size, [em.value(size), em.value(size)], {"tt": below(16)})
    result = em.emit(R["bitop"], size, [inner, IMM0], {"tt": 0x5})
    if below(4) == 0:
        em.pools[size].append(inner)  # a second use: not-rev must leave it
    return result


def e_shift_add(em):
    return _observed(em, _shift_add(em))


def _shift_add(em):
    below = em.below
    size = em.any_size()
    s = 4 if below(2) else 1 + below(3)  # 4: the largest, which a 2-bit field cannot hold
    shifted = em.emit(R["bfi"], size, [IMM0, em.value(size), immediate(s)], {"mask": 0})
    use = Operand(shifted.ref, False, below(2) == 0)
    if below(2):
        added = em.emit(R["iadd"], size, [em.value(size), use], {"shift": 0})
    else:
        added = em.emit(R["imad"], size, [em.value(size), em.value(size), use], {"shift": 0})
    if s == 4:
        keep(em, added)  # kept: a shift packed wrongly changes just this sum
        return None
    return added


def e_extension(em):
    return _observed(em, _extension(em))


def _extension(em):
    below = em.below
    r = below(3)
    if r == 0:
        narrow = 16 if 16 in em.sizes else 32
        wide = 32 if narrow == 16 else 64
        if wide not in em.sizes:
            return None
        t = em.emit(R["signext"], wide, [em.value(narrow)], {})
    elif 64 in em.sizes and em.f.address_math:  # 64-bit extensions are address math
        t = em.emit(R["u2u64" if r == 1 else "i2i64"], 64, [em.value(32)], {})
    else:
        return None
    size = t.ref.size
    if size != 64 and em.f.floats and below(4) == 0:
        return em.emit(R["fadd"], size, [t, _float_value(em, size)], {})  # a float read
    use = Operand(t.ref, False, below(3) == 0)
    return em.emit(R["iadd"], size, [em.value(size), use], {"shift": 0})


def _in_entry_block(em) -> bool:
    blocks = getattr(em, "blocks", None)
    return bool(blocks) and em.ins is blocks[0].instructions


def e_ballot(em):
    if not _in_entry_block(em) and em.below(8):
        return None
    return _observed(em, _ballot(em))


def _ballot(em):
    below = em.below
    r = below(9)
    ballot = R["ballot"]
    if r <= 3:  # a ballot of a compare
        t = em.e_compare()
        if r == 3:  # a second use: the compare stays
            em.pools[t.ref.size].append(t)
            _observed(em, em.emit(R["iadd"], t.ref.size, [t, em.value(t.ref.size)], {"shift": 0}))
        return em.emit(ballot, 32, [t], {})
    if r <= 5:  # a constant, numbered like a recent compare 3 times in 4 (then kept)
        numbered = [c for c in em.cmps if c.ref.name.isdigit() and int(c.ref.name) < 256]
        if numbered and below(4):
            keep(em, em.emit(ballot, 32, [immediate(int(em.recent(numbered).ref.name))], {}))
            return None
        return em.emit(ballot, 32, [immediate(below(256))], {})
    if r in (6, 7):  # a fused ballot as such (rows a program rarely has otherwise)
        row = R["fcmp_ballot"] if em.f.floats and below(2) else R["icmp_ballot"]
        srcs = [em.operand(plan) for plan in plans(row, 32, em.sizes)]
        return em.emit(row, 32, srcs, em.attrs(row, 32))
    size = em.alu_sizes[below(len(em.alu_sizes))]
    return em.emit(ballot, 32, [em.value(size)], {})


def e_uadd_sat(em):
    return _observed(em, _uadd_sat(em))


def _uadd_operand(em, size: int) -> Operand:
    r = em.below(6)
    if r == 0:  # a constant near the top: the sum saturates
        k = em.emit(R["mov_imm"], size, [], {"value": (1 << size) - 1 - em.below(256)})
    elif r == 1:  # a small constant for inline-imm
        k = em.emit(R["mov_imm"], size, [], {"value": em.below(256)})
    elif r == 2 and size == 32 and 16 in em.sizes:  # a sign extension for ext-prop
        k = em.emit(R["signext"], 32, [em.value(16)], {})
    else:
        return em.value(size)
    return k


def _uadd_sat(em):
    below = em.below
    size = em.alu_sizes[below(len(em.alu_sizes))]
    srcs = [_uadd_operand(em, size), _uadd_operand(em, size)]
    unsigned = below(4)  # Mesa's form most often: .abs on both
    srcs = [Operand(s.ref, unsigned != 0 or i == below(2), False) if not s.is_immediate else s
            for i, s in enumerate(srcs)]
    return em.emit(R["uadd_sat"], size, srcs, {})


def offer_wide_phi_source(em) -> None:
    """At the end of a block, half the time, a 64-bit mov_imm with bits above its low 16,
    offered (`Emitter.phi_offer`) to a 64-bit phi that takes its source from this block:
    Mesa 5b50040c inlined such a constant into the phi as its low 16 bits. The program
    builder keeps the phi (only exported: a store takes at most 32 bits). Once a program:
    one such phi shows the bug, and each costs two instructions."""
    if (em.wide_offers or em.phi_offer is not None or not em.f.exports
            or not em.phi_waiting(64) or em.below(5)):
        return
    value = (1 << (16 + em.below(48))) | em.source.bits(16)
    k = em.emit(R["mov_imm"], 64, [], {"value": value})
    em.phi_offer = k
    em.wide_offers.add(id(k.ref))


def optimizer_pairs(f) -> list:
    """(emitter, weight) pairs for `families.emitter_pairs`."""
    return [
        (e_float_move, 5 * f.floats), (e_imm_source, 2 * f.int_arith),
        (e_not_use, f.bit_ops), (e_shift_add, f.int_arith), (e_extension, f.conversions),
        (e_ballot, 3 * f.compares), (e_uadd_sat, f.int_arith),
    ]  # fmt: skip
