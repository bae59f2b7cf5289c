"""The NIR opcode table: each opcode's types (as nir_opcodes.py gives them) and semantics.

A row says the destination type and each source type as NIR spells them (`int`, `uint32`,
`bool1`, `float`): a type without a size is "unsized" and shares one bit size with the
opcode's other unsized slots; a sized type fixes that slot. `semantics` is the function in
`integer_ops`, `bitfield_ops` or `float_ops`, written once against `BitVectors`; None means the
opcode is known (so sizes can be inferred) but has no semantics here, and the prover reports
it as unsupported. `agx` names the AGX opcode-table row that computes the same thing, where
one exists (tests/agxir/nir/test_agx_agreement.py checks each pair on random inputs).

Sizeless conversions (`u2u`, `i2f`, ...) are nir_algebraic's: their destination size is a
free size of its own. The table is built by `_table()`; nothing registers itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agxir.nir import bitfield_ops as bf
from agxir.nir import float_ops as fl
from agxir.nir import integer_ops as io
from agxir.nir import vendor_ops as vo

_TYPE = re.compile(r"(int|uint|float|bool)(\d+)?$")


@dataclass(frozen=True)
class NirOp:
    name: str
    output: str
    inputs: tuple[str, ...]
    semantics: Callable | None
    agx: str | None = None
    sizeless_conversion: bool = False

    @property
    def is_float(self) -> bool:
        """True when any slot is float-typed (the rule is a float rule, by NIR's types)."""
        return any(type_base(t) == "float" for t in (self.output, *self.inputs))


def type_base(type_: str) -> str:
    return _TYPE.match(type_).group(1)


def type_size(type_: str) -> int | None:
    bits = _TYPE.match(type_).group(2)
    return int(bits) if bits else None


def _row(rows, name, output, inputs, semantics, agx=None):
    rows[name] = NirOp(name, output, tuple(inputs), semantics, agx)


def _unop(rows, name, type_, semantics, agx=None):
    _row(rows, name, type_, [type_], semantics, agx)


def _binop(rows, name, type_, semantics, agx=None, out=None):
    _row(rows, name, out or type_, [type_, type_], semantics, agx)


def _conversions(rows) -> None:
    all_sizes = {"int": (1, 8, 16, 32, 64), "uint": (1, 8, 16, 32, 64),
                 "float": (16, 32, 64), "bool": (1, 8, 16, 32)}
    targets = {"int": ("float", "int"), "uint": ("float", "uint"),
               "float": ("int", "uint", "float"), "bool": ("float", "int", "bool")}
    semantics = {("int", "int"): io.i2i, ("uint", "uint"): io.u2u, ("bool", "int"): io.b2i,
                 ("bool", "bool"): io.b2b, ("bool", "float"): fl.b2f, ("int", "float"): fl.i2f,
                 ("uint", "float"): fl.u2f, ("float", "float"): fl.f2f,
                 ("float", "int"): fl.f2i, ("float", "uint"): fl.f2u}
    for src, dsts in targets.items():
        for dst in dsts:
            sem = semantics.get((src, dst))
            name = f"{src[0]}2{dst[0]}"
            rows[name] = NirOp(name, dst, (src,), sem, sizeless_conversion=True)
            for size in all_sizes[dst]:
                _row(rows, f"{name}{size}", f"{dst}{size}", [src], sem,
                     agx={"u2u64": "u2u64", "i2i64": "i2i64"}.get(f"{name}{size}"))
    rows["f2b"] = NirOp("f2b", "bool", ("float",), fl.f2b, sizeless_conversion=True)
    for size in (1, 8, 16, 32):
        _row(rows, f"f2b{size}", f"bool{size}", ["float"], fl.f2b)
    _row(rows, "f2f16_rtne", "float16", ["float"], fl.f2f)
    _row(rows, "f2f16_rtz", "float16", ["float"], None)


def _integer(rows) -> None:
    _unop(rows, "mov", "uint", io.mov)
    _unop(rows, "ineg", "int", io.ineg)
    _unop(rows, "inot", "int", io.inot, agx="bitop")
    _unop(rows, "iabs", "int", io.iabs)
    _unop(rows, "isign", "int", io.isign)
    _binop(rows, "iadd", "int", io.iadd, agx="iadd")
    _binop(rows, "isub", "int", io.isub, agx="iadd")
    _binop(rows, "imul", "int", io.imul, agx="imul")
    _binop(rows, "amul", "int", bf.amul, agx="amul")
    for name in ("iadd_sat", "isub_sat"):
        _binop(rows, name, "int", getattr(io, name))
    for name in ("uadd_sat", "usub_sat", "uadd_carry", "usub_borrow", "uhadd", "urhadd",
                 "uabs_usub", "umin", "umax", "umul_high", "udiv", "umod"):
        _binop(rows, name, "uint", getattr(io, name))
    for name in ("ihadd", "irhadd", "imin", "imax", "imul_high", "idiv", "irem", "imod"):
        _binop(rows, name, "int", getattr(io, name))
    _row(rows, "uabs_isub", "uint", ["int", "int"], io.uabs_isub)
    _row(rows, "imul_2x32_64", "int64", ["int32", "int32"], io.imul_2x32_64)
    _row(rows, "umul_2x32_64", "uint64", ["uint32", "uint32"], io.umul_2x32_64)
    _binop(rows, "imul_32x16", "int32", io.imul_32x16)
    _binop(rows, "umul_32x16", "uint32", io.umul_32x16)
    _row(rows, "iadd3", "int", ["int"] * 3, io.iadd3)
    _row(rows, "imad", "int", ["int"] * 3, io.imad)
    _unop(rows, "udiv_aligned_4", "uint", io.udiv_aligned_4)
    _binop(rows, "iand", "uint", io.iand, agx="bitop")
    _binop(rows, "ior", "uint", io.ior, agx="bitop")
    _binop(rows, "ixor", "uint", io.ixor, agx="bitop")
    _row(rows, "bitfield_select", "uint", ["uint"] * 3, io.bitfield_select)
    _row(rows, "ishl", "int", ["int", "uint32"], io.ishl)
    _row(rows, "ishr", "int", ["int", "uint32"], io.ishr, agx="asr")
    _row(rows, "ushr", "uint", ["uint", "uint32"], io.ushr)
    _row(rows, "urol", "uint", ["uint", "uint32"], io.urol)
    _row(rows, "uror", "uint", ["uint", "uint32"], io.uror)
    compares = {"ieq": ("int", io.ieq), "ine": ("int", io.ine), "ilt": ("int", io.ilt),
                "ige": ("int", io.ige), "ult": ("uint", io.ult), "uge": ("uint", io.uge)}
    for name, (type_, sem) in compares.items():
        for suffix, out in (("", "bool1"), ("8", "bool8"), ("16", "bool16"), ("32", "bool32")):
            _row(rows, name + suffix, out, [type_, type_], sem, agx="icmp" if not suffix else None)
    for suffix, out in (("", "bool1"), ("8", "bool8"), ("16", "bool16"), ("32", "bool32")):
        _row(rows, "bitnz" + suffix, out, ["uint", "uint32"], io.bitnz)
        _row(rows, "bitz" + suffix, out, ["uint", "uint32"], io.bitz)
    _row(rows, "bcsel", "uint", ["bool1", "uint", "uint"], io.bcsel)
    for size in (8, 16, 32):
        _row(rows, f"b{size}csel", "uint", [f"bool{size}", "uint", "uint"], io.bcsel)
    _row(rows, "icsel_eqz", "int", ["int"] * 3, io.icsel_eqz)
    _row(rows, "bounds_agx", "int", ["int"] * 3, io.bounds_agx)


def _bits_and_packing(rows) -> None:
    _row(rows, "ubitfield_extract", "uint32", ["uint32", "int32", "int32"], bf.ubitfield_extract,
         agx="bfeil")
    _row(rows, "ibitfield_extract", "int32", ["int32", "int32", "int32"], bf.ibitfield_extract)
    _row(rows, "ubfe", "uint32", ["uint32"] * 3, bf.ubfe)
    _row(rows, "ibfe", "int32", ["int32", "uint32", "uint32"], bf.ibfe)
    _row(rows, "bitfield_insert", "uint32", ["uint32", "uint32", "int32", "int32"],
         bf.bitfield_insert)
    _row(rows, "bfm", "uint32", ["int32", "int32"], bf.bfm)
    _row(rows, "bfi", "uint32", ["uint32"] * 3, bf.bfi)
    for name in ("extract_u8", "extract_u16", "insert_u8", "insert_u16"):
        _binop(rows, name, "uint", getattr(bf, name))
    for name in ("extract_i8", "extract_i16"):
        _binop(rows, name, "int", getattr(bf, name))
    _row(rows, "bit_count", "uint32", ["uint"], bf.bit_count)
    _row(rows, "find_lsb", "int32", ["int"], bf.find_lsb)
    _row(rows, "ufind_msb", "int32", ["uint"], bf.ufind_msb)
    _unop(rows, "ifind_msb", "int32", bf.ifind_msb)
    _unop(rows, "uclz", "uint32", bf.uclz)
    _unop(rows, "bitfield_reverse", "uint32", bf.bitfield_reverse)
    _row(rows, "pack_64_2x32_split", "uint64", ["uint32", "uint32"], io.pack_split)
    _row(rows, "pack_32_2x16_split", "uint32", ["uint16", "uint16"], io.pack_split)
    _row(rows, "pack_32_4x8_split", "uint32", ["uint8"] * 4, io.pack_split)
    _row(rows, "unpack_64_2x32_split_x", "uint32", ["uint64"], io.unpack_low)
    _row(rows, "unpack_64_2x32_split_y", "uint32", ["uint64"], io.unpack_high)
    _row(rows, "unpack_32_2x16_split_x", "uint16", ["uint32"], io.unpack_low)
    _row(rows, "unpack_32_2x16_split_y", "uint16", ["uint32"], io.unpack_high)
    _row(rows, "imadshl_agx", "int", ["int"] * 4, bf.imadshl_agx, agx="imad")
    _row(rows, "imsubshl_agx", "int", ["int"] * 4, bf.imsubshl_agx, agx="imad")
    _row(rows, "ulea_agx", "uint64", ["uint64", "uint32", "uint32"], bf.ulea_agx, agx="ulea")
    _row(rows, "ilea_agx", "uint64", ["uint64", "int32", "uint32"], bf.ilea_agx, agx="ilea")
    _row(rows, "extr_agx", "uint32", ["uint32"] * 4, bf.extr_agx, agx="extr")


def _vendor(rows) -> None:
    for name in ("sdot_4x8_iadd", "sudot_4x8_iadd", "sdot_4x8_iadd_sat", "sudot_4x8_iadd_sat",
                 "sdot_2x16_iadd", "sdot_2x16_iadd_sat", "udot_4x8_uadd_sat", "udot_2x16_uadd_sat"):
        _row(rows, name, "int32", ["uint32", "uint32", "int32"], getattr(vo, name))
    for name in ("udot_4x8_uadd", "udot_2x16_uadd"):
        _row(rows, name, "uint32", ["uint32"] * 3, getattr(vo, name))
    for name in ("imul24", "umul24", "imul24_relaxed"):
        _binop(rows, name, "int32", getattr(vo, name))
    _binop(rows, "umul24_relaxed", "uint32", vo.umul24_relaxed)
    _binop(rows, "umul_low", "uint32", vo.umul_low)
    for name, type_ in (("umad24", "uint32"), ("umad24_relaxed", "uint32"),
                        ("imad24_ir3", "int32"), ("imadsh_mix16", "int32"),
                        ("i32csel_gt", "int32"), ("i32csel_ge", "int32")):
        _row(rows, name, type_, [type_] * 3, getattr(vo, name))
    _row(rows, "ufind_msb_rev", "int32", ["uint"], vo.ufind_msb_rev)
    _unop(rows, "ifind_msb_rev", "int32", vo.ifind_msb_rev)
    _row(rows, "shfr", "uint32", ["uint32"] * 3, vo.shfr)
    _row(rows, "interleave_agx", "uint32", ["uint16", "uint16"], vo.interleave_agx)
    # mediump conversions: the 16-bit conversion that may later be dropped
    for name, out, src, sem in (("f2fmp", "float16", "float32", fl.f2f),
                                ("i2imp", "int16", "int32", io.i2i),
                                ("f2imp", "int16", "float32", fl.f2i),
                                ("f2ump", "uint16", "float32", fl.f2u),
                                ("i2fmp", "float16", "int32", fl.i2f),
                                ("u2fmp", "float16", "uint32", fl.u2f)):
        _row(rows, name, out, [src], sem)


def _float(rows) -> None:
    for name in ("fneg", "fabs"):
        _unop(rows, name, "float", getattr(fl, name))
    for name in ("fadd", "fsub", "fmul"):
        _binop(rows, name, "float", getattr(fl, name))
    _row(rows, "ffma", "float", ["float"] * 3, fl.ffma)
    for name in ("flt", "fge", "feq", "fneu", "fltu", "fgeu", "fequ", "fneo", "funord", "ford"):
        for suffix, out in (("", "bool1"), ("8", "bool8"), ("16", "bool16"), ("32", "bool32")):
            _row(rows, name + suffix, out, ["float", "float"], getattr(fl, name))
    # Known float opcodes without semantics here: sizes are inferred, verdicts unsupported.
    for name in ("fsign", "fsat", "frcp", "frsq", "fsqrt", "fexp2", "flog2", "ftrunc", "fceil",
                 "ffloor", "ffract", "fround_even", "fquantize2f16", "fsin", "fcos",
                 "fsat_signed", "fclamp_pos", "fsin_agx"):
        _unop(rows, name, "float", None)
    for name in ("fdiv", "fmin", "fmax", "fpow", "fmod", "frem", "slt", "sge", "seq", "sne"):
        _binop(rows, name, "float", None)
    _row(rows, "flrp", "float", ["float"] * 3, None)
    _row(rows, "fcsel", "float32", ["float32"] * 3, None)
    _row(rows, "fmulz", "float32", ["float32"] * 2, None)
    _row(rows, "ffmaz", "float32", ["float32"] * 3, None)
    _row(rows, "ldexp", "float", ["float", "int32"], None)
    _row(rows, "pack_half_2x16_split", "uint32", ["float32", "float32"], fl.pack_half_2x16_split)
    _row(rows, "pack_half_2x16_rtz_split", "uint32", ["float32", "float32"], None)
    _row(rows, "unpack_half_2x16_split_x", "float32", ["uint32"], fl.unpack_half_2x16_split_x)
    _row(rows, "unpack_half_2x16_split_y", "float32", ["uint32"], fl.unpack_half_2x16_split_y)
    _row(rows, "fisnormal", "bool1", ["float"], None)
    _row(rows, "fisfinite", "bool1", ["float"], None)
    _row(rows, "frexp_exp", "int32", ["float"], None)
    _row(rows, "frexp_sig", "float", ["float"], None)


def _table() -> dict[str, NirOp]:
    rows: dict[str, NirOp] = {}
    _conversions(rows)
    _integer(rows)
    _bits_and_packing(rows)
    _vendor(rows)
    _float(rows)
    return rows


NIR_OPS: dict[str, NirOp] = _table()
