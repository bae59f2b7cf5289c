"""The opcode table: one row per opcode, modeled on AGX (Mesa's agx_opcodes.py).

Rows are built here and collected into `OPCODES` explicitly; nothing registers itself on
import. Departures from AGX are listed in docs/opcodes.md.
"""

from __future__ import annotations

from agxir.opcodes import effects, floating, integer
from agxir.opcodes.operands import FLOAT_CONDS, INT_CONDS
from agxir.opcodes.spec import (
    ADDR,
    AT_MOST_DEST,
    FIMM8,
    FLOAT,
    IMM16,
    INT,
    RAW,
    SAME_AS_DEST,
    Attr,
    Opcode,
    Src,
)

ABS = frozenset({"abs"})
ABS_NEG = frozenset({"abs", "neg"})
ALL_SIZES = (16, 32, 64)

SHIFT4 = Attr("shift", range(5))
INVERT = Attr("inv", (0, 1))
ICOND = Attr("cond", INT_CONDS)
FCOND = Attr("cond", FLOAT_CONDS)
BIT_MASK = Attr("mask", range(65))
FORMAT = Attr("fmt", tuple(effects.FORMAT_BYTES))
MEMORY_SHIFT = Attr("shift", range(3))


def int_src(name: str, mods=ABS, sizes=ALL_SIZES, imm="imm8") -> Src:
    return Src(name, INT, sizes, mods, imm, width_rule=AT_MOST_DEST)


def float_src(name: str) -> Src:
    return Src(name, FLOAT, (16, 32), ABS_NEG, FIMM8, width_rule=AT_MOST_DEST)


def compare_srcs(kind: str) -> tuple[Src, Src]:
    if kind == INT:
        return (Src("a", INT, ALL_SIZES), Src("b", INT, ALL_SIZES))
    return (Src("a", FLOAT, (16, 32), ABS_NEG, FIMM8), Src("b", FLOAT, (16, 32), ABS_NEG, FIMM8))


def payload_srcs() -> tuple[Src, Src]:
    return (
        Src("x", RAW, ALL_SIZES, width_rule=SAME_AS_DEST),
        Src("y", RAW, ALL_SIZES, width_rule=SAME_AS_DEST),
    )


def wide_int_src(name: str) -> Src:
    """An integer source read at 64 bits whatever the destination (no width rule, as a
    memory index): a saturating add is wider than its result, so `.abs` matters even on a
    full-width source. `_no_wider_than_dest` keeps AGX's "at most the destination"."""
    return Src(name, INT, (16, 32), ABS)


def _no_wider_than_dest(ins) -> str | None:
    for src in ins.srcs:
        if not src.is_immediate and src.size > ins.dest.size:
            return f"a {src.size}-bit source is wider than the {ins.dest.size}-bit destination"
    return None


def _mask_fits(ins) -> str | None:
    if ins.attrs["mask"] > ins.dest.size:
        return f"mask={ins.attrs['mask']} is wider than the {ins.dest.size}-bit destination"
    return None


def _mov_imm_fits(ins) -> str | None:
    if ins.attrs["value"] >> ins.dest.size:
        return f"value does not fit the {ins.dest.size}-bit destination"
    return None


def _convert_sizes(ins) -> str | None:
    mode, src, dest = ins.attrs["mode"], ins.srcs[0].size, ins.dest.size
    if mode in ("f2u", "f2s", "f2f") and src not in (16, 32):
        return f"convert mode={mode} needs a 16- or 32-bit float source"
    if mode == "f2f" and src == dest:
        return "convert mode=f2f needs different source and destination sizes"
    if mode == "f2f" and ins.srcs[0].is_immediate:
        # AGX's convert has no f2f mode (Mesa spells f2f as fadd a, -0.0), so no encoding
        # says what its immediate would mean
        return "convert mode=f2f cannot take an immediate"
    return None


def _load_width(ins) -> str | None:
    bits = 8 * effects.FORMAT_BYTES[ins.attrs["fmt"]]
    if ins.dest.size < bits:
        return f"fmt={ins.attrs['fmt']} does not fit the {ins.dest.size}-bit destination"
    return None


def _store_width(ins) -> str | None:
    bits = 8 * effects.FORMAT_BYTES[ins.attrs["fmt"]]
    if ins.srcs[0].size < bits:
        return f"fmt={ins.attrs['fmt']} is wider than the {ins.srcs[0].size}-bit value"
    return None


BITOP_ALIASES = {
    "and": 0x8, "or": 0xE, "xor": 0x6, "nor": 0x1, "nand": 0x7, "xnor": 0x9,
    "andn1": 0x4, "andn2": 0x2, "orn1": 0xD, "orn2": 0xB, "mov": 0xA, "not": 0x5,
}  # fmt: skip
UNARY_BITOP_ALIASES = frozenset({"mov", "not"})

ROWS: tuple[Opcode, ...] = (
    # --- integer ------------------------------------------------------------------------
    Opcode("iadd", "a + (b << shift); neg on b subtracts", (
        int_src("a"), int_src("b", ABS_NEG)), ALL_SIZES, integer.iadd, (SHIFT4,)),
    Opcode("imad", "a * b + (c << shift); neg on c subtracts", (
        int_src("a"), int_src("b"), int_src("c", ABS_NEG)), ALL_SIZES, integer.imad, (SHIFT4,)),
    Opcode("imul", "a * b (NIR imul; AGX lowers it to imad a, b, #0)", (
        int_src("a"), int_src("b")), ALL_SIZES, integer.imul, commutative=True),
    Opcode("bitop", "bit k of the truth table tt is the result for (a | b << 1) == k", (
        int_src("a"), int_src("b")), ALL_SIZES, integer.bitop, (Attr("tt", range(16), hex=True),),
        aliases={name: {"tt": tt} for name, tt in BITOP_ALIASES.items()}),
    Opcode("bfi", "insert the low mask bits of b into a at bit (c mod width)", (
        int_src("a"), int_src("b"), int_src("c")), ALL_SIZES, integer.bfi, (BIT_MASK,),
        check=_mask_fits),
    Opcode("bfeil", "(a & ~field) | ((b >> (c mod width)) & field), field = low mask bits", (
        int_src("a"), int_src("b"), int_src("c")), ALL_SIZES, integer.bfeil, (BIT_MASK,),
        check=_mask_fits),
    Opcode("extr", "((b:a) >> (c mod 2*width)) & field: extract from a register pair", (
        int_src("a"), int_src("b"), int_src("c")), (16, 32), integer.extr, (BIT_MASK,),
        check=_mask_fits),
    Opcode("asr", "arithmetic shift right by (b mod width)", (
        int_src("a"), int_src("b")), ALL_SIZES, integer.asr),
    Opcode("mov_imm", "an immediate of the destination's width", (), ALL_SIZES,
        integer.mov_imm, (Attr("value", range(1 << 64), hex=True),), check=_mov_imm_fits),
    Opcode("uadd_sat", "clamp(ext(a) + ext(b), 0, 2^w - 1), sources extended to 64 bits "
        "(sign unless .abs): uadd_sat a.abs, b.abs is NIR uadd_sat, AGX iadd.sat |a|, |b|", (
        wide_int_src("a"), wide_int_src("b")), (16, 32), integer.uadd_sat, commutative=True,
        check=_no_wider_than_dest),
    Opcode("signext", "sign-extend a narrow source (AGX: iadd x, #0)", (
        int_src("a", frozenset()),), ALL_SIZES, integer.signext),
    # --- compares and selects -------------------------------------------------------------
    Opcode("icmp", "(cond(a, b) XOR inv) ? 1 : 0", compare_srcs(INT), (16, 32),
        integer.icmp, (ICOND, INVERT)),
    Opcode("fcmp", "(cond(a, b) XOR inv) ? 1 : 0", compare_srcs(FLOAT), (16, 32),
        integer.fcmp, (FCOND, INVERT)),
    Opcode("icmpsel", "cond(a, b) ? x : y (no invert bit)", compare_srcs(INT) + payload_srcs(),
        ALL_SIZES, integer.icmpsel, (ICOND,)),
    Opcode("fcmpsel", "cond(a, b) ? x : y (no invert bit)", compare_srcs(FLOAT) + payload_srcs(),
        ALL_SIZES, integer.fcmpsel, (FCOND,)),
    # --- the wave (one run's threads): undefined once the wave has diverged ------------------
    Opcode("ballot", "bit t set where thread t runs this with c != 0", (
        Src("c", RAW, (16, 32)),), (32,), integer.ballot, wave=True, may_ub=True),
    Opcode("icmp_ballot", "ballot of (cond(a, b) XOR inv)", compare_srcs(INT), (32,),
        integer.icmp_ballot, (ICOND, INVERT), wave=True, may_ub=True),
    Opcode("fcmp_ballot", "ballot of (cond(a, b) XOR inv)", compare_srcs(FLOAT), (32,),
        integer.fcmp_ballot, (FCOND, INVERT), wave=True, may_ub=True),
    # --- float -----------------------------------------------------------------------------
    Opcode("fadd", "a + b", (float_src("a"), float_src("b")), (16, 32), floating.fadd,
        sat=True, commutative=True),
    Opcode("fmul", "a * b", (float_src("a"), float_src("b")), (16, 32), floating.fmul,
        sat=True, commutative=True),
    Opcode("ffma", "a * b + c, rounded once", (float_src("a"), float_src("b"), float_src("c")),
        (16, 32), floating.ffma, sat=True),
    Opcode("fmov", "fadd a, -0.0", (float_src("a"),), (16, 32), floating.fmov, sat=True),
    Opcode("convert", "u2f/s2f round to nearest even; f2u/f2s truncate and saturate; an "
        "immediate is an integer 0..255 (AGX's ALU source encoding)", (
        Src("a", RAW, ALL_SIZES),), (16, 32), floating.convert,
        (Attr("mode", floating.CONVERT_MODES),), check=_convert_sizes),
    # --- address math ------------------------------------------------------------------------
    Opcode("amul", "a * b; undefined when the exact unsigned product exceeds INT32_MAX", (
        int_src("a", sizes=(16, 32)), int_src("b", sizes=(16, 32))), (32,), integer.amul,
        commutative=True, may_ub=True),
    Opcode("aadd", "a + b; undefined when the exact unsigned sum exceeds INT32_MAX", (
        int_src("a", sizes=(16, 32)), int_src("b", sizes=(16, 32))), (32,), integer.aadd,
        commutative=True, may_ub=True),
    Opcode("u2u64", "zero-extend to 64 bits", (Src("a", RAW, (16, 32), imm=None),), (64,),
        integer.u2u64),
    Opcode("i2i64", "sign-extend to 64 bits", (Src("a", RAW, (16, 32), imm=None),), (64,),
        integer.i2i64),
    Opcode("ulea", "base + (zext64(index) << shift)", (
        Src("base", ADDR, (64,), imm=None), Src("index", RAW, (32,), imm=None)), (64,),
        integer.ulea, (Attr("shift", range(32)),)),
    Opcode("ilea", "base + (sext64(index) << shift)", (
        Src("base", ADDR, (64,), imm=None), Src("index", RAW, (32,), imm=None)), (64,),
        integer.ilea, (Attr("shift", range(32)),)),
    # --- memory, special registers, outputs ----------------------------------------------------
    Opcode("device_load", "load fmt at base + (ext64(index) << (log2 bytes + shift))", (
        Src("base", ADDR, (64,), imm=None), Src("index", INT, (32,), ABS, IMM16)), (16, 32),
        effects.device_load, (FORMAT, MEMORY_SHIFT), pure=False, may_ub=True,
        check=_load_width),
    Opcode("device_store", "store the low fmt bits of value at the device_load address", (
        Src("value", RAW, (16, 32), imm=None), Src("base", ADDR, (64,), imm=None),
        Src("index", INT, (32,), ABS, IMM16)), None, effects.device_store,
        (FORMAT, MEMORY_SHIFT), pure=False, side_effect=True, may_ub=True, check=_store_width),
    Opcode("get_sr", "read a special register", (), (16, 32), effects.get_sr,
        (Attr("sr", effects.SPECIAL_REGISTERS),), pure=False),
    Opcode("export", "write an output of this thread", (
        Src("value", RAW, ALL_SIZES, imm=None),), None, effects.export,
        (Attr("slot", range(8)),), pure=False, side_effect=True),
    Opcode("phi", "the source from the predecessor control came from", (), ALL_SIZES,
        effects.no_value, variadic=True),
    # --- terminators ---------------------------------------------------------------------------
    Opcode("jump", "continue at the target", (), None, effects.no_value, terminator=True,
        targets=1, pure=False),
    Opcode("if_icmp", "to the first target when cond(a, b) XOR inv, else the second",
        compare_srcs(INT), None, effects.if_icmp, (ICOND, INVERT), terminator=True,
        targets=2, pure=False),
    Opcode("if_fcmp", "to the first target when cond(a, b) XOR inv, else the second",
        compare_srcs(FLOAT), None, effects.if_fcmp, (FCOND, INVERT), terminator=True,
        targets=2, pure=False),
    Opcode("stop", "end the thread", (), None, effects.no_value, terminator=True, pure=False),
)  # fmt: skip

OPCODES: dict[str, Opcode] = {row.name: row for row in ROWS}


def opcode(name: str) -> Opcode:
    return OPCODES[name]
