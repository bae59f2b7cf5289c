"""ConcreteBitVectors (agxir.rewrite.concrete) agrees with the z3 machine on every integer
operation, so a rule's computed parts mean the same when a pass runs them as when the audit
proves them."""

from __future__ import annotations

import random

import pytest

from agxir.rewrite import CONCRETE
from oracles.smt import Z3BitVectors, bitvec, value_of

Z3 = Z3BitVectors({})
BINARY = ["add", "sub", "mul", "and_", "or_", "xor", "eq", "ult", "slt"]
EDGES = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF]


def values(width: int, rng: random.Random) -> list[int]:
    mask = (1 << width) - 1
    return [v & mask for v in EDGES] + [rng.getrandbits(width) for _ in range(8)]


@pytest.mark.parametrize("width", [16, 32, 64])
def test_agrees_with_z3(width):
    rng = random.Random(width)
    for a in values(width, rng):
        for b in values(width, rng)[::3]:
            for op in BINARY:
                expected = value_of(getattr(Z3, op)(bitvec(a, width), bitvec(b, width), width))
                assert getattr(CONCRETE, op)(a, b, width) == expected, (op, a, b)
        assert CONCRETE.not_(a, width) == value_of(Z3.not_(bitvec(a, width), width))
        for amount in (0, 1, width - 1):
            for op in ("shl", "lshr"):
                expected = value_of(getattr(Z3, op)(bitvec(a, width), amount, width))
                assert getattr(CONCRETE, op)(a, amount, width) == expected
            ashr = value_of(Z3.ashr_var(bitvec(a, width), bitvec(amount, width), width))
            assert CONCRETE.ashr_var(a, amount, width) == ashr
        if width < 64:
            for op in ("zext", "sext"):
                assert getattr(CONCRETE, op)(a, width, 64) == value_of(
                    getattr(Z3, op)(bitvec(a, width), width, 64)
                )
        assert CONCRETE.trunc(a, width, 16) == value_of(Z3.trunc(bitvec(a, width), width, 16))


def test_truth_values_and_select():
    assert CONCRETE.both(True, False) is False and CONCRETE.either(True, False) is True
    assert CONCRETE.negate(False) is True
    assert CONCRETE.select(True, 1, 2, 16) == 1 and CONCRETE.select(False, 1, 2, 16) == 2
    assert CONCRETE.const(-1, 16) == 0xFFFF


def test_no_floats_or_memory():
    with pytest.raises(NotImplementedError, match="fadd"):
        CONCRETE.fadd(1, 2, 32)
