"""The one table from the model's opcodes to Mesa's: every model opcode (`agxir/opcodes`,
the SSA rows and the machine rows) with its Mesa 23.3.6 counterpart in
`src/asahi/compiler/agx_opcodes.py`, or None and why.

`fuzz/mesa/wire.py` translates by this table; `untranslatable(fn)` names the opcodes of a
function Mesa has no counterpart for, so a campaign counts such programs by opcode instead
of dropping them; `mesa_opcode_names(src)` reads the Mesa tree's own `agx_opcodes.py` so a
test can check that every Mesa name cited here exists in the tree the bridge is built from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from agxir.ir import EXEC, R0L, SSA, VREG, Function, VirtualRegister
from agxir.machine.opcodes import MACHINE_ROWS
from agxir.opcodes.table import OPCODES


@dataclass(frozen=True)
class Mapping:
    model: str
    mesa: str | None  # the Mesa opcode, or None
    why: str  # how the two correspond, or why there is no counterpart


TABLE: tuple[Mapping, ...] = (
    # --- integer ----------------------------------------------------------------------------
    Mapping("iadd", "iadd", "same fields: shift, .abs/.neg sources"),
    Mapping("imad", "imad", "same fields: shift"),
    Mapping("imul", None, "a NIR op: Mesa's isel emits imad a, b, #0; translating it so would "
            "come back as imad, not imul"),
    Mapping("bitop", "bitop", "truth table in Mesa's truth_table, same bit order; the tables "
            "of mov/not (second source #0) and and/or/xor go as Mesa's pseudo-ops of those "
            "names, as its isel emits them (its copyprop knows only mov), and come back as "
            "bitop"),
    Mapping("bfi", "bfi", "mask in bfi_mask"),
    Mapping("bfeil", "bfeil", "mask in bfi_mask"),
    Mapping("extr", "extr", "mask in bfi_mask"),
    Mapping("asr", "asr", "same sources"),
    Mapping("mov_imm", "mov_imm", "value in imm; at the exec level `r0l = mov_imm 0` is Mesa's "
            "begin_cf pseudo-op (lowered to the r0l write by agx_lower_pseudo)"),
    Mapping("uadd_sat", "iadd", "iadd.sat with shift 0 (Mesa's saturate bit); an iadd.sat "
            "comes back as uadd_sat"),
    Mapping("signext", None, "AGX spells it iadd x, #0, which would come back as iadd"),
    # --- compares and selects ----------------------------------------------------------------
    Mapping("icmp", "icmp", "Mesa pseudo-op: icond and invert_cond"),
    Mapping("fcmp", "fcmp", "Mesa pseudo-op: fcond and invert_cond"),
    Mapping("icmpsel", "icmpsel", "icond"),
    Mapping("fcmpsel", "fcmpsel", "fcond"),
    # --- the wave ----------------------------------------------------------------------------
    Mapping("ballot", None, "Mesa 23.3.6 has no ballot instruction"),
    Mapping("icmp_ballot", None, "Mesa 23.3.6 has no ballot instruction"),
    Mapping("fcmp_ballot", None, "Mesa 23.3.6 has no ballot instruction"),
    # --- float -------------------------------------------------------------------------------
    Mapping("fadd", "fadd", "saturate"),
    Mapping("fmul", "fmul", "saturate"),
    Mapping("ffma", "fma", "saturate"),
    Mapping("fmov", None, "Mesa spells it fadd a, -0.0 (agx_fmov_to), which would come back "
            "as fadd"),
    Mapping("convert", "convert", "Mesa's source 0 is the agx_convert mode as an immediate and "
            "round is RTE for u2f/s2f, RTZ for f2u/f2s; f2f and 8/64-bit sources have no mode"),
    # --- address math: lowered in NIR by Mesa, no backend instruction ---------------------------
    Mapping("amul", None, "address arithmetic is folded into device_load/store in NIR "
            "(agx_nir_lower_address); no backend instruction"),
    Mapping("aadd", None, "address arithmetic is folded in NIR; no backend instruction"),
    Mapping("u2u64", None, "64-bit conversions are lowered in NIR; no backend instruction"),
    Mapping("i2i64", None, "64-bit conversions are lowered in NIR; no backend instruction"),
    Mapping("ulea", None, "address arithmetic is folded in NIR; no backend instruction"),
    Mapping("ilea", None, "address arithmetic is folded in NIR; no backend instruction"),
    # --- memory, special registers, outputs --------------------------------------------------------
    Mapping("device_load", "device_load", "format (i8/i16/i32 = AGX_FORMAT 0/1/2), shift, "
            "mask 1 (one component)"),
    Mapping("device_store", "device_store", "format, shift, mask 1"),
    Mapping("get_sr", "get_sr", "thread_id is sr 80, thread_position_in_grid.x"),
    Mapping("export", "local_store", "local_store value, #slot, #0: an output store Mesa keeps "
            "in program order (schedule class store) and never inlines a constant into; mask 1 "
            "(3 for 64 bits: RA reads popcount(mask) x 32 bits of the value)"),
    Mapping("phi", "phi", "sources in the order of the block's predecessors"),
    Mapping("stop", "stop", "same"),
    # --- SSA terminators: the exec level replaces them -----------------------------------------
    Mapping("jump", None, "SSA level only: Mesa's backend gets exec-mask control flow "
            "(run lower-cf first)"),
    # if_icmp / if_fcmp: the SSA two-target terminators have no counterpart; the exec-level
    # rows of the same name do (below).
    # --- exec-mask control flow (agxir/machine/opcodes.py) ---------------------------------
    Mapping("if_icmp", "if_icmp", "exec level: nest, icond, invert_cond, no target (the SSA "
            "two-target branch has no counterpart: run lower-cf first)"),
    Mapping("if_fcmp", "if_fcmp", "exec level: nest, fcond, invert_cond, no target"),
    Mapping("else_icmp", "else_icmp", "nest, icond, invert_cond"),
    Mapping("else_fcmp", "else_fcmp", "nest, fcond, invert_cond"),
    Mapping("while_icmp", "while_icmp", "nest, icond, invert_cond"),
    Mapping("while_fcmp", "while_fcmp", "nest, fcond, invert_cond"),
    Mapping("pop_exec", "pop_exec", "nest"),
    Mapping("push_exec", "if_fcmp", "Mesa's agx_push_exec: if_fcmp #0, #0, eq, n; that exact "
            "if_fcmp comes back as push_exec"),
    Mapping("break", "break", "nest, no target"),
    Mapping("jmp_exec_any", "jmp_exec_any", "target block"),
    Mapping("jmp_exec_none", "jmp_exec_none", "target block"),
    Mapping("parallel_copy", "intl", "Mesa has no parallel-copy instruction: agx_ra lowers "
            "its copies on the spot (agx_emit_parallel_copies). The bridge wraps that call and "
            "keeps them as a pseudo-instruction, an intl (an opcode the model never uses) with "
            "n destinations and n sources, which mesa:lower-copies hands to Mesa's real "
            "sequentializer"),
)

BY_MODEL: dict[str, Mapping] = {row.model: row for row in TABLE}

# Mesa opcodes the bridge reads back that are not the counterpart of a model row: the
# pseudo-ops RA and agx_lower_pseudo leave, each read back as the model row it stands for.
MESA_READBACK = {
    "mov": "bitop", "not": "bitop", "and": "bitop", "or": "bitop", "xor": "bitop",
    "begin_cf": "mov_imm",
}  # fmt: skip


def model_opcode_names() -> set[str]:
    """Every opcode the model has, SSA rows and machine rows."""
    return set(OPCODES) | {row.name for row in MACHINE_ROWS}


# Rows that translate whatever their operands and attributes (every row with a Mesa
# counterpart but the four `untranslatable` looks closer at)
_ALWAYS = frozenset(row.model for row in TABLE if row.mesa is not None) - {
    "convert", "phi", "uadd_sat", "mov_imm"}


def untranslatable(fn: Function) -> Counter:
    """The opcodes of `fn` Mesa has no counterpart for, with their counts (empty when the
    whole function translates). The SSA level's branches count as `jump` / `if_icmp (ssa)`."""
    counts: Counter = Counter()
    ssa, vreg, exec_level = fn.level == SSA, fn.level == VREG, fn.level == EXEC
    for block in fn.blocks:
        for ins in block.instructions:
            name = ins.opcode.name
            if ssa and name in ("if_icmp", "if_fcmp"):
                counts[f"{name} (ssa)"] += 1
                continue
            dest = ins.dest
            if vreg or type(dest) is VirtualRegister or (
                dest is None and any(type(d) is VirtualRegister for d in ins.dests)
            ):
                counts["vreg level"] += 1
                continue
            if name in _ALWAYS:
                continue
            row = BY_MODEL.get(name)
            if row is None or row.mesa is None:
                counts[name] += 1
            elif name == "convert" and convert_mode(ins) is None:
                counts["convert (f2f or 8/64-bit)"] += 1
            elif name == "phi" and any(src.is_immediate for src in ins.srcs):
                # Mesa's phis never take immediates (agx_optimizer inlines none into a
                # phi; its RA asserts a phi source is the phi's size, and an immediate is
                # 16-bit)
                counts["phi (immediate source)"] += 1
            elif name == "phi" and any(src.is_uniform and src.size == 64 for src in ins.srcs):
                counts["phi (64-bit uniform source)"] += 1  # copyprop makes none (no 64-bit ALU)
            elif name == "uadd_sat" and any(src.neg for src in ins.srcs):
                counts["uadd_sat (.neg)"] += 1
            elif name == "mov_imm" and dest == R0L and exec_level and ins.attrs.get("value"):
                counts["mov_imm r0l (non-zero, exec level)"] += 1
    return counts


def translatable(fn: Function) -> bool:
    return not untranslatable(fn)


# agx_convert (agx_compiler.h): (model mode, source bits, destination bits) -> mode
CONVERT_MODES = {
    ("u2f", 16): 6, ("s2f", 16): 7, ("u2f", 32): 10, ("s2f", 32): 11,
    ("f2u", 16): 4, ("f2s", 16): 5, ("f2u", 32): 8, ("f2s", 32): 9,
}  # fmt: skip
CONVERT_BY_MESA = {mesa: key for key, mesa in CONVERT_MODES.items()}


def convert_mode(ins) -> int | None:
    mode = ins.attrs.get("mode")
    if mode in ("u2f", "s2f"):
        return CONVERT_MODES.get((mode, ins.srcs[0].size))
    if mode in ("f2u", "f2s") and ins.srcs[0].size in (16, 32):
        return CONVERT_MODES.get((mode, ins.dest.size))
    return None


def mesa_opcode_names(mesa_src: Path) -> set[str]:
    """The opcode names `src/asahi/compiler/agx_opcodes.py` of a Mesa tree defines. The
    file is plain Python with no imports (Mesa's generators import it): run in a namespace
    of its own, its `opcodes` dict is the table the generated headers come from."""
    path = Path(mesa_src) / "src" / "asahi" / "compiler" / "agx_opcodes.py"
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102
    return set(namespace["opcodes"])
