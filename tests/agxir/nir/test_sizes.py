"""Bit-size inference: one instance per consistent assignment, conflicts rejected."""

from __future__ import annotations

import pytest

from agxir.nir import SizeError, instances
from agxir.nir.pattern import parse_rule


def sizes_of(search, replace, allowed=(8, 16, 32, 64)):
    rule = parse_rule((search, replace), "t", 0)
    return [(i.label, i.size(("search", ()))) for i in instances(rule, allowed)]


def test_a_free_size_gives_one_instance_per_allowed_size():
    assert [root for _, root in sizes_of(("iadd", "a", 0), "a")] == [8, 16, 32, 64]
    assert [root for _, root in sizes_of(("iadd", "a", 0), "a", (16, 32))] == [16, 32]


def test_explicit_and_typed_sizes_fix_the_class():
    assert sizes_of(("iadd", "a@32", "b"), "a") == [("@32 (a:32 b:32)", 32)]
    assert sizes_of(("iadd@16", "a", "b"), "a") == [("@16 (a:16 b:16)", 16)]
    # ishl's count is uint32 whatever the shifted value's size
    assert sizes_of(("ishl", "a@8", "b"), "a")[0][0] == "@8 (a:8 b:32)"
    # ulea_agx: 64-bit base, 32-bit index and shift
    assert sizes_of(("ulea_agx", "a", "b", "c"), ("iadd", "a", ("ishl", ("u2u64", "b"), "c"))) == [
        ("@64 (a:64 b:32 c:32)", 64)]


def test_compares_are_one_bit_and_their_sources_free():
    found = sizes_of(("ieq", "a", "b"), False)
    assert [label for label, _ in found] == [
        "@1 (a:8 b:8)", "@1 (a:16 b:16)", "@1 (a:32 b:32)", "@1 (a:64 b:64)"]


def test_boolean_slots_include_one_bit():
    # bcsel's condition is bool1; an iand of 1-bit values is fixed by the annotation
    assert sizes_of(("iand", "a@1", "b"), ("bcsel", "a", "b", False)) == [("@1 (a:1 b:1)", 1)]


def test_independent_free_sizes_multiply():
    # a sizeless conversion's destination is free on its own
    assert len(sizes_of(("u2u", "a"), ("u2u", "a"))) == 16


def test_conflicts_and_ambiguity_are_rejected():
    with pytest.raises(SizeError, match="no consistent bit sizes"):
        sizes_of(("iadd", "a@32", ("u2u16", "b")), "a")
    with pytest.raises(SizeError, match="ambiguous bit size"):
        sizes_of(("ieq", "a", "b"), ("ieq", 1, 2))
