"""What each value predicate assumes, on concrete values: range-analysis predicates read
per slot type as weakly as nir_range_analysis.c allows, the constant tests (is_odd,
is_ult_32, is_5lsb_not_zero) and the treatment of names without a meaning."""

from __future__ import annotations

import pytest

from agxir.nir.predicates import ASSUMED, NO_MEANING, UNMODELLED, meaning
from agxir.rewrite.concrete import ConcreteBitVectors

EDGES32 = (0, 1, 2, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF)


def holds(name, value, width=32, kind="int"):
    how, test = meaning(name)
    assert how == ASSUMED, name
    return bool(test(ConcreteBitVectors(), value, width, kind))


def as_signed(v, w=32):
    return v - (1 << w) if v >> (w - 1) else v


SIGNED = {
    "is_gt_zero": lambda s: s > 0,
    "is_lt_zero": lambda s: s < 0,
    "is_not_zero": lambda s: s != 0,
    "is_not_negative": lambda s: s >= 0,
    "is_not_positive": lambda s: s <= 0,
}

# A uint slot: constants are eq_zero or gt_zero (nonzero), and int ranges pass unchanged, so
# the reading is the union of the signed one and "nonzero is gt_zero".
UNSIGNED = {
    "is_gt_zero": lambda v: v != 0,
    "is_lt_zero": lambda v: as_signed(v) < 0,
    "is_not_zero": lambda v: v != 0,
    "is_not_negative": lambda v: True,
    "is_not_positive": lambda v: as_signed(v) <= 0,
}


@pytest.mark.parametrize("name", sorted(SIGNED))
def test_range_predicates_compare_signed_in_int_and_bool_slots(name):
    for kind in ("int", "bool"):
        for v in EDGES32:
            assert holds(name, v, 32, kind) == SIGNED[name](as_signed(v)), (name, kind, v)
    assert holds(name, 0x80, 8) == SIGNED[name](-128)


@pytest.mark.parametrize("name", sorted(UNSIGNED))
def test_range_predicates_are_weaker_in_uint_slots(name):
    for v in EDGES32:
        assert holds(name, v, 32, "uint") == UNSIGNED[name](v), (name, v)


def test_constant_tests():
    for v in EDGES32:
        assert holds("is_odd", v) == bool(v & 1)
        assert holds("is_ult_32", v, kind="uint") == (v < 32)
        assert holds("is_5lsb_not_zero", v) == bool(v & 31)
    assert holds("is_a_number", 0x7FC00000, kind="int")  # an integer is always a number


def test_names_without_a_meaning_and_unknown_names():
    assert meaning("is_used_once")[0] == NO_MEANING
    assert meaning("is_not_const")[0] == NO_MEANING
    # only_lower_N_bits_used constrains how a result is used: only the prover reads it, on
    # the search's root; as a value predicate it is unmodelled, like names we do not know
    assert meaning("only_lower_8_bits_used") == (UNMODELLED, None)
    assert meaning("is_made_up_predicate") == (UNMODELLED, None)
    assert meaning("is_unsigned_multiple_of_3") == (UNMODELLED, None)
