"""Each NIR opcode that has an AGX counterpart computes what the AGX opcode-table row does.

The NIR semantics (agxir.nir) and the AGX row's semantics (agxir.opcodes) are run on the same
random, edge-biased operands on the concrete machine: iadd/isub vs iadd (with .neg),
imul vs imul, imadshl_agx/imsubshl_agx vs imad with a shift, ulea_agx/ilea_agx vs ulea/ilea,
extr_agx vs extr, amul vs amul (undefined on the same inputs), u2u64/i2i64, ishr vs asr,
the bitwise ops vs bitop, compares vs icmp, ubitfield_extract vs bfeil.
"""

from __future__ import annotations

import random

import pytest

from agxir.ir import Instruction, Operand, Value
from agxir.nir.evaluate import Tracking
from agxir.nir.ops import NIR_OPS
from agxir.opcodes import OPCODES
from agxir.rewrite.concrete import ConcreteBitVectors

SAMPLES = 200


class OperandMachine(ConcreteBitVectors):
    """The concrete machine with an instruction's operands and undefined behaviour."""

    def __init__(self, operands):
        self.operands = operands
        self.undefined = False

    def operand(self, index):
        return self.operands[index]

    def undefined_if(self, cond, reason):
        self.undefined = self.undefined or bool(cond)


def agx(name, operands, widths, dest, attrs=None, neg=()):
    srcs = [Operand(Value(f"s{i}", w), neg=i in neg) for i, w in enumerate(widths)]
    ins = Instruction(OPCODES[name], Value("d", dest), srcs, dict(attrs or {}))
    m = OperandMachine(operands)
    result = OPCODES[name].semantics(m, ins)
    return result, m.undefined


def nir(name, operands, widths, dest):
    m = Tracking(ConcreteBitVectors())
    result = NIR_OPS[name].semantics(m, list(operands), list(widths), dest)
    return result, any(cond for _, cond in m.raised)


def edge_values(rng, w):
    edges = [0, 1, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1, 0x7FFF, 0x10000]
    return rng.choice(edges) & ((1 << w) - 1) if rng.random() < 0.3 else rng.getrandbits(w)


def samples(name, widths):
    rng = random.Random(name)
    for _ in range(SAMPLES):
        yield [edge_values(rng, w) for w in widths]


# (nir op, agx row, nir source widths, agx attrs, agx negated sources, dest, operand fixer)
PAIRS = [
    ("iadd", "iadd", (32, 32), {"shift": 0}, (), 32, None),
    ("iadd", "iadd", (64, 64), {"shift": 0}, (), 64, None),
    ("isub", "iadd", (16, 16), {"shift": 0}, (1,), 16, None),
    ("imul", "imul", (32, 32), {}, (), 32, None),
    ("inot", "bitop", (32,), {"tt": 0x5}, (), 32, None),
    ("iand", "bitop", (32, 32), {"tt": 0x8}, (), 32, None),
    ("ior", "bitop", (16, 16), {"tt": 0xE}, (), 16, None),
    ("ixor", "bitop", (64, 64), {"tt": 0x6}, (), 64, None),
    ("ishr", "asr", (32, 32), {}, (), 32, None),
    ("u2u64", "u2u64", (32,), {}, (), 64, None),
    ("i2i64", "i2i64", (16,), {}, (), 64, None),
    ("amul", "amul", (32, 32), {}, (), 32, None),
]


@pytest.mark.parametrize("nir_op, row, widths, attrs, neg, dest, _", PAIRS,
                         ids=[f"{p[0]}-{p[1]}-{p[5]}" for p in PAIRS])
def test_direct_counterparts_agree(nir_op, row, widths, attrs, neg, dest, _):
    assert NIR_OPS[nir_op].agx == row
    agx_widths = widths if row != "bitop" or len(widths) == 2 else (widths[0], widths[0])
    for operands in samples(nir_op + row, widths):
        agx_operands = operands if len(agx_widths) == len(operands) else operands * 2
        expected = agx(row, agx_operands, agx_widths, dest, attrs, neg)
        got = nir(nir_op, operands, widths, dest)
        if expected[1]:  # undefined for AGX: NIR must agree it is undefined too
            assert got[1], (nir_op, operands)
            continue
        assert got == expected, (nir_op, operands)


@pytest.mark.parametrize("nir_op, negate", [("imadshl_agx", False), ("imsubshl_agx", True)])
def test_multiply_shift_add_is_imad_with_a_shift(nir_op, negate):
    for a, b, c, s in samples(nir_op, (32, 32, 32, 3)):
        s %= 5
        expected = agx("imad", [a, b, c], (32, 32, 32), 32, {"shift": s}, (2,) if negate else ())
        assert nir(nir_op, [a, b, c, s], (32, 32, 32, 32), 32) == expected


@pytest.mark.parametrize("nir_op, row", [("ulea_agx", "ulea"), ("ilea_agx", "ilea")])
def test_lea_is_the_agx_lea(nir_op, row):
    for base, index, s in samples(nir_op, (64, 32, 5)):
        expected = agx(row, [base, index], (64, 32), 64, {"shift": s})
        assert nir(nir_op, [base, index, s], (64, 32, 32), 64) == expected


def test_extr_agx_is_extr_below_a_shift_of_64():
    """NIR's extr_agx gives 0 for shifts of 64 and more, where AGX's extr wraps the shift."""
    for low, high, shift, count in samples("extr", (32, 32, 6, 5)):
        expected = agx("extr", [low, high, shift], (32, 32, 32), 32, {"mask": count})
        assert nir("extr_agx", [low, high, shift, count], (32,) * 4, 32) == expected


@pytest.mark.parametrize("nir_op, cond, inv", [
    ("ieq", "ueq", 0), ("ult", "ult", 0), ("ilt", "slt", 0),
    ("ine", "ueq", 1), ("uge", "ult", 1), ("ige", "slt", 1)])
def test_compares_are_icmp(nir_op, cond, inv):
    assert NIR_OPS[nir_op].agx == "icmp"
    for a, b in samples(nir_op, (32, 32)):
        truth, _ = agx("icmp", [a, b], (32, 32), 32, {"cond": cond, "inv": inv})
        assert nir(nir_op, [a, b], (32, 32), 1) == (truth, False)


def test_ubitfield_extract_is_bfeil_where_defined():
    for base, offset, bits in samples("bfeil", (32, 5, 5)):
        bits = bits or 1
        if offset + bits > 32:
            assert nir("ubitfield_extract", [base, offset, bits], (32,) * 3, 32)[1]
            continue
        expected = agx("bfeil", [0, base, offset], (32, 32, 32), 32, {"mask": bits})
        assert nir("ubitfield_extract", [base, offset, bits], (32,) * 3, 32) == expected


def test_every_declared_counterpart_is_tested():
    tested = {p[0] for p in PAIRS} | {"imadshl_agx", "imsubshl_agx", "ulea_agx", "ilea_agx",
                                      "extr_agx", "ubitfield_extract"}
    tested |= {"ieq", "ult", "ilt", "ine", "ige", "uge"}
    declared = {name for name, op in NIR_OPS.items() if op.agx}
    assert declared <= tested, declared - tested


def test_a_shift_and_mask_is_bfeil_even_where_ubitfield_extract_is_undefined():
    """AGX's bfeil masks its shift count, so (a >> b) & (2**bits - 1) is bfeil for every b;
    NIR's ubitfield_extract is undefined for b >= 32 or b + bits > 32 (docs/nir-audit.md)."""
    rng = random.Random(11)
    undefined_seen = 0
    for bits in range(1, 32):
        for _ in range(20):
            base = rng.getrandbits(32)
            offset = rng.choice([rng.getrandbits(5), 31, 32 - bits + 1, rng.getrandbits(32)])
            shifted = nir("ushr", [base, offset], (32, 32), 32)[0]
            search = nir("iand", [shifted, (1 << bits) - 1], (32, 32), 32)[0]
            assert agx("bfeil", [0, base, offset], (32, 32, 32), 32, {"mask": bits}) == (
                search, False)
            if offset >= 32 or offset + bits > 32:
                assert nir("ubitfield_extract", [base, offset, bits], (32,) * 3, 32)[1]
                undefined_seen += 1
    assert undefined_seen > 100
