"""What each nir_algebraic predicate, condition and flag means to the prover.

Three treatments, reported per instance:

* assumed: the predicate constrains the value, and the proof assumes it (written against
  `Machine`, so the concrete replay checks it too), e.g. `is_unsigned_multiple_of_4`;
* no meaning: it steers matching, use counts or cost (`is_used_once`, `is_not_const`,
  `many-comm-expr`, a rule's `options->...` condition), so values are unconstrained and a
  proof without it is the proof;
* unmodelled: it has a meaning this model does not encode (fast-math flags `nsz`/`nnan`/
  `ninf`, `~` inexact float searches, float range analysis, how a result is used, and every
  predicate not listed here). A proof without it still proves the rule; a counterexample
  without it proves nothing, and the instance is reported unsupported, naming it.
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


def _is_pos_power_of_two(m, v, w, is_float):
    return m.both(_power_of_two(m, v, w), m.slt(m.const(0, w), v, w))


def _is_neg_power_of_two(m, v, w, is_float):
    negated = m.sub(m.const(0, w), v, w)
    return m.both(m.slt(v, m.const(0, w), w), _power_of_two(m, negated, w))


def _is_bitcount2(m, v, w, is_float):
    rest = m.and_(v, m.sub(v, m.const(1, w), w), w)
    return m.both(truth(m, v, w), _power_of_two(m, rest, w))


def _half(w: int) -> tuple[int, int]:
    half = max(w // 2, 1)
    low = mask(half)
    return low, mask(w) ^ low


def _half_equals(upper: bool, ones: bool):
    def test(m, v, w, is_float):
        low, high = _half(w)
        part = high if upper else low
        want = part if ones else 0
        return m.eq(m.and_(v, m.const(part, w), w), m.const(want, w), w)

    return test


def _is_not_const_zero(m, v, w, is_float):
    if is_float:
        return truth(m, m.and_(v, m.const(mask(w) >> 1, w), w), w)
    return truth(m, v, w)


def _exponent_mask(w: int) -> int:
    exponent_bits = {16: 5, 32: 8, 64: 11}.get(w, 8)
    return mask(exponent_bits) << (w - 1 - exponent_bits)


def _is_finite(m, v, w, is_float):
    exponent = _exponent_mask(w)
    return m.negate(m.eq(m.and_(v, m.const(exponent, w), w), m.const(exponent, w), w))


def _is_finite_not_zero(m, v, w, is_float):
    return m.both(_is_finite(m, v, w, True), _is_not_const_zero(m, v, w, True))


def _is_negative_zero(m, v, w, is_float):
    return m.eq(v, m.const(1 << (w - 1), w), w)


def _unsigned_multiple(n: int):
    def test(m, v, w, is_float):
        return m.eq(m.and_(v, m.const(n - 1, w), w), m.const(0, w), w)

    return test


MEANINGS: dict[str, Callable] = {
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

NO_MEANING_NAMES = frozenset({
    "is_used_once", "is_used_more_than_once", "is_used_by_if", "is_not_used_by_if",
    "is_not_const", "many-comm-expr", "is_not_fmul", "is_fmul", "is_fsign", "is_not_fsign",
    "is_only_used_by_iadd", "is_used_by_non_fsat", "is_used_by_non_ldc_nv",
    "is_only_used_by_fadd", "is_not_used_by_load",
})

_MULTIPLE = re.compile(r"is_unsigned_multiple_of_(\d+)$")
_FLOAT_CONTROL_WORDS = ("float_controls", "denorm", "signed_zero", "rounding", "fmulz")


def meaning(name: str) -> tuple[str, Callable | None]:
    """(treatment, test) for a predicate: test(m, value, width, is_float) -> Bool."""
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
    return UNMODELLED, None


def condition_treatment(condition: str) -> str:
    """A rule's C condition selects targets (`options->...`); those that read float
    controls change what the rule may assume about floats, which is not modelled."""
    if any(word in condition for word in _FLOAT_CONTROL_WORDS):
        return UNMODELLED
    return NO_MEANING
