"""What each nir_algebraic predicate, condition and flag means to the prover.

Three treatments, reported per instance:

* assumed: the predicate constrains the value, and the proof assumes it (written against
  `BitVectors`, so the concrete replay checks it too), e.g. `is_unsigned_multiple_of_4`;
* no meaning: it steers matching, use counts or cost (`is_used_once`, `is_not_const`,
  `many-comm-expr`, a rule's `options->...` condition), so values are unconstrained and a
  proof without it is the proof;
* unmodelled: it has a meaning this model does not encode (fast-math flags `nsz`/`nnan`/
  `ninf`, `~` inexact float searches, how a result is used, and every predicate not listed
  here). A proof without it still proves the rule; a counterexample without it proves
  nothing, and the instance is reported unsupported, naming it.

Range-analysis predicates (`is_gt_zero`, `is_not_negative`, ...) are read as weakly as
nir_range_analysis.c allows for the type of the slot they sit in (see `_sign_test`).
`only_lower_N_bits_used` on the search's root is read by the prover (only the low N bits of
the two results must agree); anywhere else it is unmodelled.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agxir.nir.integer_ops import mask, truth

ASSUMED = "assumed"
NO_MEANING = "no meaning"
UNMODELLED = "unmodelled"


def _power_of_two(m, v, w):
    nonzero = truth(m, v, w)
    return m.both(nonzero, m.eq(m.and_(v, m.sub(v, m.const(1, w), w), w), m.const(0, w), w))


def _is_pos_power_of_two(m, v, w, kind):
    return m.both(_power_of_two(m, v, w), m.slt(m.const(0, w), v, w))


def _is_neg_power_of_two(m, v, w, kind):
    negated = m.sub(m.const(0, w), v, w)
    return m.both(m.slt(v, m.const(0, w), w), _power_of_two(m, negated, w))


def _is_bitcount2(m, v, w, kind):
    rest = m.and_(v, m.sub(v, m.const(1, w), w), w)
    return m.both(truth(m, v, w), _power_of_two(m, rest, w))


def _half(w: int) -> tuple[int, int]:
    half = max(w // 2, 1)
    low = mask(half)
    return low, mask(w) ^ low


def _half_equals(upper: bool, ones: bool):
    def test(m, v, w, kind):
        low, high = _half(w)
        part = high if upper else low
        want = part if ones else 0
        return m.eq(m.and_(v, m.const(part, w), w), m.const(want, w), w)

    return test


def _is_not_const_zero(m, v, w, kind):
    if kind == "float":
        return truth(m, m.and_(v, m.const(mask(w) >> 1, w), w), w)
    return truth(m, v, w)


def _exponent_mask(w: int) -> int:
    exponent_bits = {16: 5, 32: 8, 64: 11}.get(w, 8)
    return mask(exponent_bits) << (w - 1 - exponent_bits)


def _is_finite(m, v, w, kind):
    exponent = _exponent_mask(w)
    return m.negate(m.eq(m.and_(v, m.const(exponent, w), w), m.const(exponent, w), w))


def _is_finite_not_zero(m, v, w, kind):
    return m.both(_is_finite(m, v, w, True), _is_not_const_zero(m, v, w, True))


def _is_negative_zero(m, v, w, kind):
    return m.eq(v, m.const(1 << (w - 1), w), w)


def _unsigned_multiple(n: int):
    def test(m, v, w, kind):
        return m.eq(m.and_(v, m.const(n - 1, w), w), m.const(0, w), w)

    return test


def _sign_test(test_int, test_float, test_uint, a_number: bool = False):
    """A range-analysis predicate (nir_range_analysis.c), read from the slot's type. Floats:
    an IEEE compare with +0.0, or NaN, since a range says nothing about NaN (Mesa's
    `is_a_number_*` variants add that, `a_number`). Ints and bools: a signed compare with 0.
    A uint slot is weaker: its constants are only ever eq_zero or gt_zero (any nonzero value)
    and int-typed ranges pass to it unchanged, so `test_uint` is the union of both readings."""

    def test(m, v, w, kind):
        zero = m.const(0, w)
        if kind == "float":
            number = _is_a_number(m, v, w, kind)
            compared = test_float(m, v, zero, w)
            return m.both(number, compared) if a_number else m.either(compared, m.negate(number))
        return (test_uint if kind == "uint" else test_int)(m, v, zero, w)

    return test


def _nonzero(m, v, z, w):
    return m.negate(m.eq(v, z, w))


def _float_nonzero(m, v, z, w):
    return m.either(m.flt(v, z, w), m.flt(z, v, w))


def _is_a_number(m, v, w, kind):
    if kind != "float":
        return m.eq(v, v, w)
    exponent = _exponent_mask(w)
    is_nan = m.both(m.eq(m.and_(v, m.const(exponent, w), w), m.const(exponent, w), w),
                    truth(m, m.and_(v, m.const(mask(w - 1) ^ exponent, w), w), w))
    return m.negate(is_nan)


_SIGN_READINGS = {  # name: (int, float, uint)
    "not_zero": (_nonzero, _float_nonzero, _nonzero),
    "gt_zero": (lambda m, v, z, w: m.slt(z, v, w), lambda m, v, z, w: m.flt(z, v, w), _nonzero),
    "lt_zero": (lambda m, v, z, w: m.slt(v, z, w), lambda m, v, z, w: m.flt(v, z, w),
                lambda m, v, z, w: m.slt(v, z, w)),
    "not_negative": (lambda m, v, z, w: m.negate(m.slt(v, z, w)),
                     lambda m, v, z, w: m.fle(z, v, w), lambda m, v, z, w: m.eq(v, v, w)),
    "not_positive": (lambda m, v, z, w: m.negate(m.slt(z, v, w)),
                     lambda m, v, z, w: m.fle(v, z, w),
                     lambda m, v, z, w: m.negate(m.slt(z, v, w))),
}


MEANINGS: dict[str, Callable] = {
    "is_a_number": _is_a_number,
    "is_odd": lambda m, v, w, f: truth(m, m.and_(v, m.const(1, w), w), w),
    "is_ult_32": lambda m, v, w, f: m.ult(v, m.const(32, w), w),
    "is_5lsb_not_zero": lambda m, v, w, f: truth(m, m.and_(v, m.const(31, w), w), w),
    "is_pos_power_of_two": _is_pos_power_of_two,
    "is_neg_power_of_two": _is_neg_power_of_two,
    "is_bitcount2": _is_bitcount2,
    "is_upper_half_zero": _half_equals(True, False),
    "is_lower_half_zero": _half_equals(False, False),
    "is_upper_half_negative_one": _half_equals(True, True),
    "is_lower_half_negative_one": _half_equals(False, True),
    "is_not_const_zero": _is_not_const_zero,
    "is_ult_0xfffc07fc": lambda m, v, w, f: m.ult(v, m.const(0xFFFC07FC, w), w),
    "is_first_5_bits_uge_2": lambda m, v, w, f: m.negate(
        m.ult(m.and_(v, m.const(31, w), w), m.const(2, w), w)),
    "is_finite": _is_finite,
    "is_finite_not_zero": _is_finite_not_zero,
    "is_negative_zero": _is_negative_zero,
}
MEANINGS.update({f"is_{name}": _sign_test(*tests) for name, tests in _SIGN_READINGS.items()})
MEANINGS.update({f"is_a_number_{name}": _sign_test(*tests, a_number=True)
                 for name, tests in _SIGN_READINGS.items()})

NO_MEANING_NAMES = frozenset({
    "is_used_once", "is_used_more_than_once", "is_used_by_if", "is_not_used_by_if",
    "is_not_const", "many-comm-expr", "is_not_fmul", "is_fmul", "is_fsign", "is_not_fsign",
    "is_only_used_by_iadd", "is_used_by_non_fsat", "is_used_by_non_ldc_nv",
    "is_only_used_by_fadd", "is_not_used_by_load",
})

_MULTIPLE = re.compile(r"is_unsigned_multiple_of_(\d+)$")
LOW_BITS_USED = re.compile(r"only_lower_(\d+)_bits_used$")
_FLOAT_CONTROL_WORDS = ("float_controls", "denorm", "signed_zero", "rounding", "fmulz")


def meaning(name: str) -> tuple[str, Callable | None]:
    """(treatment, test) for a predicate: test(m, value, width, kind) -> Bool, where kind is
    the base type of the slot the value fills ("float", "int", "uint" or "bool")."""
    if name in MEANINGS:
        return ASSUMED, MEANINGS[name]
    found = _MULTIPLE.match(name)
    if found:
        n = int(found.group(1))
        if n > 0 and n & (n - 1) == 0:
            return ASSUMED, _unsigned_multiple(n)
        return UNMODELLED, None
    if name in NO_MEANING_NAMES:
        return NO_MEANING, None
    return UNMODELLED, None  # only_lower_N_bits_used too, unless the prover reads it on the root


def condition_treatment(condition: str) -> str:
    """A rule's C condition selects targets (`options->...`); those that read float
    controls change what the rule may assume about floats, which is not modelled."""
    if any(word in condition for word in _FLOAT_CONTROL_WORDS):
        return UNMODELLED
    return NO_MEANING
