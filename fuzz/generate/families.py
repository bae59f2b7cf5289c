"""The weighted opcode families a program's instructions are drawn from.

`operations` has the plain families' emitters; each shape module (compare/select and
copies, optimizer, exec-compare, conversion, schedule) adds the families of the shapes it
builds, which emit through `operations`. Put together here, above all of them, so that
`operations` imports none of the modules built on it. The order of the pairs is part of
what a seed means: keep it.
"""

from __future__ import annotations

from agxir.opcodes import OPCODES
from fuzz.generate.conversion_shapes import conversion_pairs
from fuzz.generate.copy_shapes import e_cmpsel_fusion, e_mov_chain
from fuzz.generate.exec_cmp_shapes import exec_cmp_pairs
from fuzz.generate.features import Features
from fuzz.generate.operations import Emitter
from fuzz.generate.optimizer_shapes import optimizer_pairs
from fuzz.generate.schedule_shapes import schedule_pairs

R = OPCODES


def base_pairs(f: Features) -> list:
    """(emitter, weight) pairs of the plain opcode families (`operations.Emitter`'s) and of
    the compare/select and mov chains (`copy_shapes`)."""
    E = Emitter

    def row(name):
        opcode = R[name]
        return lambda self: self.generic(opcode)

    return [
        (row("iadd"), 6 * f.int_arith), (row("imad"), 2 * f.int_arith),
        (row("imul"), 2 * f.int_arith), (E.e_mov_imm, 2 * f.int_arith),
        (row("bitop"), 4 * f.bit_ops), (row("bfi"), f.bit_ops), (row("bfeil"), f.bit_ops),
        (row("extr"), f.bit_ops), (row("asr"), f.bit_ops),
        (row("signext"), f.conversions), (E.e_convert, 2 * f.conversions),
        (E.e_compare, 2 * f.compares), (row("icmpsel"), 2 * f.compares),
        (lambda self: self.e_compare(True), f.floats), (row("fcmpsel"), f.floats),
        (row("fadd"), f.floats), (row("fmul"), f.floats), (row("ffma"), f.floats),
        (row("fmov"), f.floats),
        (E.e_amul, f.address_math), (E.e_aadd, f.address_math), (E.e_address, 2 * f.address_math),
        (row("u2u64"), f.address_math * f.values64), (row("i2i64"), f.address_math * f.values64),
        (E.e_load, 4 * f.loads), (E.e_store, f.stores), (E.e_export, f.exports),
        (E.e_get_sr, 1),
        (e_cmpsel_fusion, 4 * f.cmpsel_fusion), (e_mov_chain, 3 * f.mov_chains),
    ]  # fmt: skip


def emitter_pairs(f: Features) -> list:
    """(emitter, weight) pairs of every opcode family but the array accesses (`addresses`
    adds those)."""
    return base_pairs(f) + optimizer_pairs(f) + exec_cmp_pairs(f) + conversion_pairs(f) + schedule_pairs(f)
