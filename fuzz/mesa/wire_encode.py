"""The bridge's wire form, outbound: a `Function` (exec or machine level) as the numeric
lines the C side (`fuzz/mesa/c/wire.c`) turns into Mesa's `agx_context`, by the one opcode
table (`fuzz/mesa/opcodes.py`). Names do not cross the wire: `encode` numbers the SSA
values, blocks and uniforms (uniforms at naturally aligned 16-bit offsets, as Mesa's `u`
registers) and keeps the numbering in a `Names` for the decoder."""

from __future__ import annotations

from agxir import ir
from agxir.ir import EXEC, MACHINE
from fuzz.mesa.opcodes import BY_MODEL, convert_mode, untranslatable
from fuzz.mesa.wire_format import (
    COND_ROWS,
    FLOAT_COND_OPS,
    FLOAT_CONDS,
    FORMATS,
    IMMEDIATE,
    INT_CONDS,
    MODS,
    PSEUDO_BITOPS,
    REGISTER,
    ROUND_RTE,
    ROUND_RTZ,
    SIZE_CODE,
    SR_THREAD_ID,
    UNIFORM,
    ZERO,
    Names,
    Untranslatable,
    value_tokens,
)


def _index(kind: int, value: int, size: int, abs_: bool = False, neg: bool = False) -> str:
    return f"{kind}.{value}.{SIZE_CODE[size]}.{int(abs_) | int(neg) << 1}"


# The fields after the opcode of an instruction with none of its own: COND INV NEST SHIFT
# SAT MASK FORMAT IMM TARGET, all zero but TARGET (-1). SAT is the one often set.
PLAIN_FIELDS = ("0 0 0 0 0 0 0 0 -1", "0 0 0 0 1 0 0 0 -1")
# Model rows that go across as the Mesa opcode of the same fields, no field of their own
# but .sat: the common case, spelled without the general path.
PLAIN = frozenset({"fadd", "fmul", "ffma", "asr", "stop"})


class _Prefixes(dict):
    """An encoding's operand tokens before their MODS digit, by what they name: the
    function's values and uniforms from the start, a register's or an immediate's made on
    its first use (`dict.__missing__`), anything else refused (Untranslatable)."""

    def __missing__(self, ref) -> str:
        found = self[ref] = _Encoder._prefix(ref)
        return found


class _Encoder:
    def __init__(self, fn: ir.Function) -> None:
        self.fn = fn
        self.value_index: dict[ir.Value, int] = {}
        self.block_index = {block: i for i, block in enumerate(fn.blocks)}
        self.uniform_half: dict[ir.Uniform, int] = {}
        # wire tokens without their MODS digit, one per value/uniform/register/immediate
        self.prefix: dict[object, str] = _Prefixes()
        half = 0
        for uniform in fn.uniforms:
            align = uniform.size // 16
            half = (half + align - 1) // align * align
            self.uniform_half[uniform] = half
            self.prefix[uniform] = f"{UNIFORM}.{half}.{SIZE_CODE[uniform.size]}."
            half += align
        # the values numbered in the order they are defined
        defined = dict.fromkeys([ins.dest for block in fn.blocks for ins in block.instructions
                                 if type(ins.dest) is ir.Value])
        prefixes = value_tokens(len(defined))[0]
        self.value_index = {value: n for n, value in enumerate(defined)}
        self.prefix.update({value: prefixes[value.size][n] for n, value in enumerate(defined)})

    def operand(self, src: ir.Operand) -> str:
        return self.prefix[src.ref] + MODS[src.abs | src.neg << 1]

    def spell(self, srcs) -> str:
        """The tokens of `srcs`, space-separated."""
        prefix = self.prefix
        return " ".join([prefix[src.ref] + MODS[src.abs | src.neg << 1] for src in srcs])

    @staticmethod
    def _prefix(ref) -> str:
        if isinstance(ref, ir.Value):
            raise Untranslatable(f"%{ref.name} is used but never defined")
        if isinstance(ref, ir.Uniform):
            raise Untranslatable(f"uniform {ref.name} is not one of the function's")
        if isinstance(ref, ir.Register):
            return f"{REGISTER}.{ref.half}.{SIZE_CODE[ref.size]}."
        if isinstance(ref, ir.Immediate):
            return f"{IMMEDIATE}.{ref.bits}.{SIZE_CODE[16]}."
        raise Untranslatable(f"operand {ref!r} (vreg level)")

    def dest(self, dest) -> str:
        if isinstance(dest, ir.Value):
            return self.prefix[dest] + "0"
        if isinstance(dest, ir.Register):
            return _index(REGISTER, dest.half, dest.size)
        raise Untranslatable(f"destination {dest!r} (vreg level)")

    def predecessors(self) -> dict[ir.Block, list[ir.Block]]:
        """Each block's logical predecessors, in the order its first phi lists them (Mesa
        orders phi sources by predecessor), else in layout order."""
        preds: dict[ir.Block, list[ir.Block]] = {block: [] for block in self.fn.blocks}
        for block in self.fn.blocks:
            for succ in block.successors:
                preds[succ].append(block)
        for block in self.fn.blocks:
            first = next(block.phis(), None)
            if first is not None and sorted(map(id, first.blocks)) == sorted(
                map(id, preds[block])
            ):
                preds[block] = list(first.blocks)
        return preds

    def instruction(self, ins: ir.Instruction, preds: list[ir.Block]) -> str:
        """The wire line of `ins`: the commonest rows by their fast writers, the rest by
        `_instruction` (the same line either way)."""
        fast = FAST_WRITERS.get(ins.opcode.name)
        if fast is None:
            return self._instruction(ins, preds)
        return fast(self, ins, preds)

    def _instruction(self, ins: ir.Instruction, preds: list[ir.Block]) -> str:
        name, a = ins.opcode.name, ins.attrs
        mesa = BY_MODEL[name].mesa
        cond = inv = nest = shift = sat = mask = fmt = imm = 0
        target = -1
        srcs = list(ins.srcs)
        dests = ins.defs()
        if name in ("icmp", "fcmp", "icmpsel", "fcmpsel", *COND_ROWS):
            cond = (FLOAT_CONDS if name in FLOAT_COND_OPS else INT_CONDS)[a["cond"]]
            inv = a.get("inv", 0)
        if "n" in a:
            nest = a["n"]
        if name in ("iadd", "imad"):
            shift = a["shift"]
        sat = int(ins.sat)
        if name == "uadd_sat":
            sat = 1
        elif name == "bitop":
            imm = a["tt"]
            # Mesa's isel emits mov/not/and/or/xor pseudo-ops (agx_lower_pseudo makes them
            # bitops), and its copyprop knows only `mov`: the aliases go as those
            alias = PSEUDO_BITOPS.get(imm)
            if alias in ("mov", "not") and srcs[1] == ZERO:
                mesa, imm, srcs = alias, 0, srcs[:1]
            elif alias in ("and", "or", "xor"):
                mesa, imm = alias, 0
        elif name in ("bfi", "bfeil", "extr"):
            imm = a["mask"]
        elif name == "mov_imm":
            imm = a["value"]
            if self.fn.level == EXEC and ins.dest == ir.R0L:
                mesa, imm, dests = "begin_cf", 0, []
        elif name == "convert":
            mode = convert_mode(ins)
            imm = ROUND_RTE if a["mode"] in ("u2f", "s2f") else ROUND_RTZ
            srcs = [ir.Operand(ir.Immediate(mode)), *srcs]
        elif name in ("device_load", "device_store"):
            fmt, shift, mask = FORMATS[a["fmt"]], a["shift"], 1
        elif name == "get_sr":
            imm = SR_THREAD_ID
        elif name == "export":
            # local_store value, #slot, #0: a store Mesa keeps in order (schedule class
            # store) and never inlines a constant into; RA reads popcount(mask) * 32 bits
            srcs = [srcs[0], ir.Operand(ir.Immediate(a["slot"])), ZERO]
            mask = 3 if srcs[0].size == 64 else 1
            fmt = FORMATS["i16"] if srcs[0].size == 16 else FORMATS["i32"]
        elif name == "push_exec":
            srcs = [ZERO, ZERO]
            cond = FLOAT_CONDS["eq"]
        elif name in ("jmp_exec_any", "jmp_exec_none"):
            target = self.block_index[ins.blocks[0]]
        elif name == "parallel_copy":
            mesa = "parallel_copy"  # the bridge's pseudo-instruction (fuzz/mesa/c/copies.c)
        elif name == "phi":
            by_block = dict(zip(map(id, ins.blocks), ins.srcs, strict=False))
            srcs = [by_block[id(pred)] for pred in preds]
        spelled = [self.operand(s) for s in srcs]
        if name == "parallel_copy":  # an immediate copied is as wide as its destination
            spelled = [_index(IMMEDIATE, s.ref.bits, d.size, s.abs, s.neg) if s.is_immediate
                       else token for s, d, token in zip(srcs, dests, spelled, strict=True)]
        operands = " ".join([self.dest(d) for d in dests] + spelled)
        return (f"i {mesa} {len(dests)} {len(srcs)} {cond} {inv} {nest} {shift} {sat} {mask} "
                f"{fmt} {imm} {target} {operands}").rstrip()

    def encode(self) -> list[str]:
        preds = self.predecessors()
        lines = [f"shader {len(self.fn.blocks)} {len(self.value_index)}"]
        block_index = self.block_index
        writers, general = FAST_WRITERS, _Encoder._instruction
        for block in self.fn.blocks:
            succs = [block_index[s] for s in block.successors]
            if len(succs) > 2:
                raise Untranslatable(f"block {block.name} has {len(succs)} successors")
            succs += [-1] * (2 - len(succs))
            block_preds = preds[block]
            lines.append(f"block {block_index[block]} {succs[0]} {succs[1]} "
                         f"{len(block_preds)}" + "".join(f" {block_index[p]}"
                                                         for p in block_preds))
            # self.instruction(ins, block_preds), its dispatch inline
            lines.extend([writers.get(ins.opcode.name, general)(self, ins, block_preds)
                          for ins in block.instructions])
        return lines


# The fast writers: the wire line of a model row's instruction for the rows programs are
# mostly made of, each the line `_Encoder._instruction`, the general writer, makes (tested),
# which they hand what they do not spell themselves. A value destination (the common case)
# is its token; a register's, by `_Encoder.dest`.

def _write_mov_imm(enc, ins, preds):
    dest = ins.dest
    if type(dest) is not ir.Value:  # a register, or exec's r0l (begin_cf): general
        return enc._instruction(ins, preds)
    return f"i mov_imm 1 0 0 0 0 0 {int(ins.sat)} 0 0 {ins.attrs['value']} -1 {enc.prefix[dest]}0"


def _write_export(enc, ins, preds):
    src = ins.srcs[0]
    size = src.size
    return (f"i local_store 0 3 0 0 0 0 {int(ins.sat)} {3 if size == 64 else 1} "
            f"{FORMATS['i16'] if size == 16 else FORMATS['i32']} 0 -1 "
            f"{enc.operand(src)} {IMMEDIATE}.{ins.attrs['slot']}.0.0 {IMMEDIATE}.0.0.0")


def _write_shifted(enc, ins, preds):  # iadd, imad
    dest = ins.dest
    if type(dest) is not ir.Value:
        return enc._instruction(ins, preds)
    return (f"i {ins.opcode.name} 1 {len(ins.srcs)} 0 0 0 {ins.attrs['shift']} {int(ins.sat)} "
            f"0 0 0 -1 {enc.prefix[dest]}0 {enc.spell(ins.srcs)}")


def _write_plain(mesa):
    def write(enc, ins, preds):
        dest = ins.dest
        spelled = enc.spell(ins.srcs)
        if dest is None:
            return f"i {mesa} 0 {len(ins.srcs)} {PLAIN_FIELDS[ins.sat]} {spelled}".rstrip()
        return f"i {mesa} 1 {len(ins.srcs)} {PLAIN_FIELDS[ins.sat]} {enc.dest(dest)} {spelled}"
    return write


def _write_phi(enc, ins, preds):
    if ins.dest is None or ins.attrs:
        return enc._instruction(ins, preds)
    by_block = dict(zip(map(id, ins.blocks), ins.srcs, strict=False))
    spelled = enc.spell([by_block[id(pred)] for pred in preds])
    return (f"i phi 1 {len(preds)} 0 0 0 0 {int(ins.sat)} 0 0 0 -1 {enc.dest(ins.dest)} "
            f"{spelled}").rstrip()


def _write_bitop(enc, ins, preds):
    srcs, table = ins.srcs, ins.attrs["tt"]
    if ins.dest is None or len(srcs) != 2:
        return enc._instruction(ins, preds)
    # Mesa's isel emits mov/not/and/or/xor pseudo-ops (see `_instruction`)
    alias = PSEUDO_BITOPS.get(table)
    mesa = "bitop"
    if alias == "mov" or alias == "not":
        if srcs[1] == ZERO:
            mesa, table, srcs = alias, 0, srcs[:1]
    elif alias is not None:
        mesa, table = alias, 0
    return (f"i {mesa} 1 {len(srcs)} 0 0 0 0 {int(ins.sat)} 0 0 {table} -1 {enc.dest(ins.dest)} "
            + enc.spell(srcs))


def _write_with_imm(attr):  # bfi, bfeil, extr: the mask in IMM
    def write(enc, ins, preds):
        if ins.dest is None:
            return enc._instruction(ins, preds)
        return (f"i {ins.opcode.name} 1 {len(ins.srcs)} 0 0 0 0 {int(ins.sat)} 0 0 "
                f"{ins.attrs[attr]} -1 {enc.dest(ins.dest)} {enc.spell(ins.srcs)}")
    return write


def _write_compare(conds):  # icmp, fcmp, icmpsel, fcmpsel
    def write(enc, ins, preds):
        a = ins.attrs
        if ins.dest is None or "n" in a:
            return enc._instruction(ins, preds)
        return (f"i {ins.opcode.name} 1 {len(ins.srcs)} {conds[a['cond']]} {a.get('inv', 0)} 0 0 "
                f"{int(ins.sat)} 0 0 0 -1 {enc.dest(ins.dest)} {enc.spell(ins.srcs)}")
    return write


def _write_exec_branch(conds):  # if/else/while_icmp/fcmp
    def write(enc, ins, preds):
        a = ins.attrs
        if ins.dest is not None or ins.dests:
            return enc._instruction(ins, preds)
        return (f"i {ins.opcode.name} 0 {len(ins.srcs)} {conds[a['cond']]} {a.get('inv', 0)} "
                f"{a['n']} 0 {int(ins.sat)} 0 0 0 -1 {enc.spell(ins.srcs)}").rstrip()
    return write


def _write_nested(enc, ins, preds):  # pop_exec, break
    if ins.dest is not None or ins.dests:
        return enc._instruction(ins, preds)
    return (f"i {BY_MODEL[ins.opcode.name].mesa} 0 {len(ins.srcs)} 0 0 {ins.attrs['n']} 0 "
            f"{int(ins.sat)} 0 0 0 -1 {enc.spell(ins.srcs)}").rstrip()


def _write_push_exec(enc, ins, preds):  # Mesa's agx_push_exec: if_fcmp #0, #0, eq, n
    if ins.dest is not None or ins.dests:
        return enc._instruction(ins, preds)
    return (f"i if_fcmp 0 2 {FLOAT_CONDS['eq']} 0 {ins.attrs['n']} 0 {int(ins.sat)} 0 0 0 -1 "
            f"{IMMEDIATE}.0.0.0 {IMMEDIATE}.0.0.0")


def _write_get_sr(enc, ins, preds):
    if ins.dest is None or ins.srcs:
        return enc._instruction(ins, preds)
    return f"i get_sr 1 0 0 0 0 0 {int(ins.sat)} 0 0 {SR_THREAD_ID} -1 {enc.dest(ins.dest)}"


def _write_jump(enc, ins, preds):  # jmp_exec_any, jmp_exec_none
    if ins.dest is not None or ins.dests or "n" in ins.attrs:
        return enc._instruction(ins, preds)
    return (f"i {ins.opcode.name} 0 {len(ins.srcs)} 0 0 0 0 {int(ins.sat)} 0 0 0 "
            f"{enc.block_index[ins.blocks[0]]} {enc.spell(ins.srcs)}").rstrip()


def _write_memory(enc, ins, preds):  # device_load, device_store
    a = ins.attrs
    dest = ins.dest
    spelled = enc.spell(ins.srcs)
    fields = f"0 0 0 {a['shift']} {int(ins.sat)} 1 {FORMATS[a['fmt']]} 0 -1"
    if dest is None:
        if ins.dests:
            return enc._instruction(ins, preds)
        return f"i {ins.opcode.name} 0 {len(ins.srcs)} {fields} {spelled}".rstrip()
    return f"i {ins.opcode.name} 1 {len(ins.srcs)} {fields} {enc.dest(dest)} {spelled}"


FAST_WRITERS = {
    "mov_imm": _write_mov_imm, "export": _write_export,
    "iadd": _write_shifted, "imad": _write_shifted,
    **{name: _write_plain(BY_MODEL[name].mesa) for name in PLAIN},
    "phi": _write_phi, "bitop": _write_bitop,
    **{name: _write_with_imm("mask") for name in ("bfi", "bfeil", "extr")},
    "icmp": _write_compare(INT_CONDS), "icmpsel": _write_compare(INT_CONDS),
    "fcmp": _write_compare(FLOAT_CONDS), "fcmpsel": _write_compare(FLOAT_CONDS),
    **{name: _write_exec_branch(FLOAT_CONDS if name in FLOAT_COND_OPS else INT_CONDS)
       for name in COND_ROWS},
    "pop_exec": _write_nested, "break": _write_nested, "push_exec": _write_push_exec,
    "get_sr": _write_get_sr, "jmp_exec_any": _write_jump, "jmp_exec_none": _write_jump,
    "device_load": _write_memory, "device_store": _write_memory,
}


def encode(fn: ir.Function, *, checked: bool = False) -> tuple[list[str], Names]:
    """The wire lines of `fn` and the numbering `decode` needs; raises Untranslatable."""
    if fn.level not in (EXEC, MACHINE):
        raise Untranslatable(f"a {fn.level}-level function: Mesa's backend takes the exec "
                             "level (run lower-cf first) or the machine level")
    missing = None if checked else untranslatable(fn)  # checked: the caller just did
    if missing:
        what = ", ".join(f"{name} x{count}" for name, count in sorted(missing.items()))
        raise Untranslatable(f"no Mesa counterpart for {what}")
    encoder = _Encoder(fn)
    names = Names(fn.level, function=fn)
    names.values = {index: value for value, index in encoder.value_index.items()}
    names.blocks = {index: block.name for block, index in encoder.block_index.items()}
    names.uniforms = {half: uniform for uniform, half in encoder.uniform_half.items()}
    return encoder.encode(), names
