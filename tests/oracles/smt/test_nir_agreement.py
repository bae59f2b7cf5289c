"""Every NIR opcode with integer semantics gives the same bits and the same undefinedness on
z3 (closed terms, simplified) as on the concrete machine, at every size, on random inputs:
the semantics are written once and each backend must mean the same thing by them."""

from __future__ import annotations

import random

import pytest
import z3

from agxir.nir.evaluate import Tracking
from agxir.nir.ops import NIR_OPS, type_base, type_size
from agxir.rewrite.concrete import ConcreteBitVectors
from oracles.smt.bitvectors import Z3BitVectors

SAMPLES = 12
INTEGER_OPS = sorted(name for name, op in NIR_OPS.items()
                     if op.semantics is not None and not op.is_float)


def slot_width(type_, w):
    size = type_size(type_)
    return size if size is not None else (1 if type_base(type_) == "bool" else w)


def widths_of(op, w):
    if op.sizeless_conversion:
        return None
    dest = slot_width(op.output, w)
    shared = w if type_size(op.output) is None else 32
    ins = [type_size(t) or (1 if type_base(t) == "bool" else shared) for t in op.inputs]
    return dest, ins


@pytest.mark.parametrize("name", INTEGER_OPS)
def test_z3_and_concrete_agree(name):
    op = NIR_OPS[name]
    rng = random.Random(name)
    for w in (8, 16, 32, 64):
        shape = widths_of(op, w)
        if shape is None:
            continue
        dest, ins = shape
        for _ in range(SAMPLES):
            args = [rng.getrandbits(i) if rng.random() < 0.7 else rng.choice([0, 1, (1 << i) - 1])
                    for i in ins]
            if name.endswith(("_agx",)) or name.startswith(("extract", "insert")):
                args = [a if k == 0 else a % 8 for k, a in enumerate(args)]
            concrete = Tracking(ConcreteBitVectors())
            expected = op.semantics(concrete, list(args), list(ins), dest)
            undefined = any(cond for _, cond in concrete.raised)
            symbolic = Tracking(Z3BitVectors({}))
            terms = [z3.BitVecVal(a, i) for a, i in zip(args, ins, strict=True)]
            got = z3.simplify(op.semantics(symbolic, terms, list(ins), dest))
            got_undefined = any(z3.is_true(z3.simplify(c)) for _, c in symbolic.raised)
            assert got_undefined == undefined, (name, w, args)
            if not undefined:
                assert got.as_long() == expected, (name, w, args)
