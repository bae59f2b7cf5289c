"""The bridge's wire form: a `Function` (exec or machine level) as the numeric lines the
C side (`fuzz/mesa/c/wire.c`) turns into Mesa's `agx_context`, and Mesa's answer back as a
`Function`, by the one opcode table (`fuzz/mesa/opcodes.py`).

All parsing of the project's text stays in Python; the C side only reads numbers. Names
do not cross the wire: `encode` numbers the SSA values, blocks and uniforms (uniforms at
naturally aligned 16-bit offsets, as Mesa's `u` registers) and keeps the numbering in a
`Names` so `decode` can give Mesa's answer the input's names back; a value or block Mesa
made itself is `%m<index>` / `b<index>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache

from agxir import ir
from agxir.machine.opcodes import opcodes_for_level
from agxir.opcodes import OPCODES
from fuzz.mesa.opcodes import BY_MODEL, CONVERT_BY_MESA, _convert_mode, untranslatable

NULL, NORMAL, IMMEDIATE, UNIFORM, REGISTER, UNDEF = range(6)
SIZE_CODE = {16: 0, 32: 1, 64: 2}
SIZE_BITS = {code: bits for bits, code in SIZE_CODE.items()}
INT_CONDS = {"ueq": 0, "ult": 1, "ugt": 2, "seq": 4, "slt": 5, "sgt": 6}
FLOAT_CONDS = {"eq": 0, "lt": 1, "gt": 2, "ltn": 3, "ge": 5, "le": 6, "gtn": 7}
FORMATS = {"i8": 0, "i16": 1, "i32": 2}
SR_THREAD_ID = 80  # thread_position_in_grid.x
ROUND_RTZ, ROUND_RTE = 0, 1
COND_ROWS = ("if_icmp", "if_fcmp", "else_icmp", "else_fcmp", "while_icmp", "while_fcmp")
FLOAT_COND_OPS = ("fcmp", "fcmpsel", "if_fcmp", "else_fcmp", "while_fcmp", "fcmp_ballot")
BITOP_TABLES = {"mov": 0xA, "not": 0x5, "and": 0x8, "or": 0xE, "xor": 0x6}
PSEUDO_BITOPS = {tt: name for name, tt in BITOP_TABLES.items()}
ZERO = ir.Operand(ir.Immediate(0))


class Untranslatable(Exception):
    """The function uses something Mesa has no counterpart for (message: what)."""


class WireError(Exception):
    """Mesa's answer has something the model cannot say (message: what)."""


@dataclass
class Names:
    level: str
    values: dict[int, ir.Value] = field(default_factory=dict)
    blocks: dict[int, str] = field(default_factory=dict)
    uniforms: dict[int, ir.Uniform] = field(default_factory=dict)
    function: ir.Function | None = None


@dataclass
class Liveness:
    live_in: dict[str, list[str]]
    live_out: dict[str, list[str]]


def _index(kind: int, value: int, size: int, abs_: bool = False, neg: bool = False) -> str:
    return f"{kind}.{value}.{SIZE_CODE[size]}.{int(abs_) | int(neg) << 1}"


MODS = ("0", "1", "2", "3")  # the MODS digit of abs | neg << 1
# A value's wire tokens by its size in bits and its number, made once: "1.N.S." (the
# encoder's, before the MODS digit) and "1.N.S.0" (a destination's, the decoder's)
_VALUE_PREFIXES: dict[int, list[str]] = {bits: [] for bits in SIZE_CODE}
_VALUE_TOKENS: dict[int, list[str]] = {bits: [] for bits in SIZE_CODE}


def _value_tokens(count: int) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """The token tables, each list at least `count` long."""
    if len(_VALUE_TOKENS[16]) < count:
        for bits, code in SIZE_CODE.items():
            prefixes = _VALUE_PREFIXES[bits]
            grown = [f"{NORMAL}.{n}.{code}." for n in range(len(prefixes), max(count, 256))]
            prefixes += grown
            _VALUE_TOKENS[bits] += [prefix + "0" for prefix in grown]
    return _VALUE_PREFIXES, _VALUE_TOKENS
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
        prefixes = _value_tokens(len(defined))[0]
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
            if self.fn.level == "exec" and ins.dest == ir.R0L:
                mesa, imm, dests = "begin_cf", 0, []
        elif name == "convert":
            mode = _convert_mode(ins)
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
    if fn.level not in ("exec", "machine"):
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


# --- Mesa's answer back to a Function ----------------------------------------------------------


@lru_cache(maxsize=4096)
def _token(token: str) -> tuple[int, int, int, int]:
    """TYPE.VALUE.SIZE.MODS as (type, value, bits, mods); operands repeat, parse once."""
    kind, value, size, mods = (int(part) for part in token.split("."))
    return kind, value, SIZE_BITS[size], mods


@lru_cache(maxsize=4096)
def _constant_operand(token: str) -> ir.Operand:
    """An immediate's or a register's operand: frozen and compared by value, so one object
    serves every answer that reads it."""
    kind, value, bits, mods = _token(token)
    ref = ir.Immediate(value) if kind == IMMEDIATE else ir.Register(value, bits)
    return ir.Operand(ref, bool(mods & 1), bool(mods & 2))


def _constructors():
    """An Operand of a reference and an Instruction of its fields, made as their dataclass
    constructors make them (the same attributes, in the same order) but without a call
    through the class (its argument tuple and `__init__` frame): an answer makes one per
    value and per instruction.
    Should `agxir.ir` give either class another field or a `__post_init__`, the classes
    themselves are used (tests/fuzz/mesa/test_wire.py checks they agree)."""
    new = object.__new__
    operand_fields = [f.name for f in fields(ir.Operand)]
    instruction_fields = [f.name for f in fields(ir.Instruction)]
    fast = (operand_fields == ["ref", "abs", "neg"]
            and instruction_fields == ["opcode", "dest", "srcs", "attrs", "blocks", "sat",
                                       "dests"]
            and not hasattr(ir.Operand, "__post_init__")
            and not hasattr(ir.Instruction, "__post_init__"))
    if not fast:
        return ir.Operand, ir.Instruction

    def operand(ref, abs_=False, neg=False, Operand=ir.Operand,  # noqa: N803
                set_field=object.__setattr__):
        made = new(Operand)
        # frozen: fields set past its __setattr__, as its __init__ does (not through
        # `__dict__`, which would make the instance a dict of its own for the collector)
        set_field(made, "ref", ref)
        set_field(made, "abs", abs_)
        set_field(made, "neg", neg)
        return made

    def instruction(opcode, dest, srcs, attrs, blocks, sat, Instruction=ir.Instruction):  # noqa: N803
        made = new(Instruction)
        made.opcode = opcode
        made.dest = dest
        made.srcs = srcs
        made.attrs = attrs
        made.blocks = blocks
        made.sat = sat
        made.dests = []
        return made

    return operand, instruction


_operand, _make_instruction = _constructors()
IMMEDIATE_ZERO = ir.Immediate(0)
MODIFIED = (_operand, lambda ref: _operand(ref, True, False),
            lambda ref: _operand(ref, False, True), lambda ref: _operand(ref, True, True))
INT_COND_NAMES = {code: name for name, code in INT_CONDS.items()}
FLOAT_COND_NAMES = {code: name for name, code in FLOAT_CONDS.items()}
FORMAT_NAMES = {code: name for name, code in FORMATS.items()}
Instruction = _make_instruction  # the readers' constructor (six fields, no dests)


class _Tokens(dict):
    """An answer's operand tokens, each read once (on the first lookup that misses) into
    what it names, then shared: a token names one thing within one answer, and an Operand
    is frozen. Looked up with `[]` from the decoder's loops, so a hit costs no call."""

    def __init__(self, read) -> None:
        super().__init__()
        self.read = read

    def __missing__(self, token: str):
        found = self[token] = self.read(token)
        return found


# The fast readers: a Mesa opcode's answer line (its tokens, the destination and sources
# already read) as the model instruction, for the opcodes answers are mostly made of. Each
# gives what `_Decoder._instruction`, the general reader, gives for the same line (tested),
# and hands it the lines it does not read itself (a rare field, an error).

def _read_plain(name):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        if row is None:
            return dec._instruction(t, preds)
        return Instruction(row, dest, srcs, {}, [], t[8] != "0")
    return read


def _read_mov_imm(dec, t, dest, srcs, preds):
    row = dec.table.get("mov_imm")
    if row is None:
        return dec._instruction(t, preds)
    return Instruction(row, dest, srcs, {"value": int(t[11])}, [], t[8] != "0")


def _read_begin_cf(dec, t, dest, srcs, preds):
    row = dec.table.get("mov_imm")
    if row is None or dest is not None:
        return dec._instruction(t, preds)
    return Instruction(row, ir.R0L, srcs, {"value": 0}, [], t[8] != "0")


def _read_shifted(name):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        if row is None or t[8] != "0":  # iadd.sat: uadd_sat, by the general reader
            return dec._instruction(t, preds)
        return Instruction(row, dest, srcs, {"shift": int(t[7])}, [], False)
    return read


def _read_pseudo_bitop(table):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get("bitop")
        if row is None:
            return dec._instruction(t, preds)
        if len(srcs) == 1:
            srcs.append(ZERO)
        return Instruction(row, dest, srcs, {"tt": table}, [], t[8] != "0")
    return read


def _read_with_imm(name, attr):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        if row is None:
            return dec._instruction(t, preds)
        return Instruction(row, dest, srcs, {attr: int(t[11])}, [], t[8] != "0")
    return read


def _read_export(dec, t, dest, srcs, preds):
    row = dec.table.get("export")
    if row is None or len(srcs) != 3:
        return dec._instruction(t, preds)
    slot, index = srcs[1].ref, srcs[2].ref
    if type(slot) is not ir.Immediate or type(index) is not ir.Immediate or index.bits:
        return dec._instruction(t, preds)
    return Instruction(row, dest, srcs[:1], {"slot": slot.bits}, [], t[8] != "0")


def _read_phi(dec, t, dest, srcs, preds):
    row = dec.table.get("phi")
    if row is None:
        return dec._instruction(t, preds)
    return Instruction(row, dest, srcs, {}, list(preds), t[8] != "0")


def _read_compare(name, conds, with_inv):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        cond = conds.get(int(t[4]))
        if row is None or cond is None:
            return dec._instruction(t, preds)
        attrs = {"cond": cond, "inv": int(t[5])} if with_inv else {"cond": cond}
        return Instruction(row, dest, srcs, attrs, [], t[8] != "0")
    return read


def _read_exec_branch(name, conds):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        cond = conds.get(int(t[4]))
        if row is None or cond is None or name == "if_fcmp":  # maybe push_exec: general
            return dec._instruction(t, preds)
        return Instruction(row, dest, srcs, {"cond": cond, "inv": int(t[5]),
                                             "n": int(t[6])}, [], t[8] != "0")
    return read


def _read_nested(name):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        if row is None:
            return dec._instruction(t, preds)
        if name == "pop_exec" and t[6] == "0":  # maybe a break (`_breaks`)
            dec.pops = True
        return Instruction(row, dest, srcs, {"n": int(t[6])}, [], t[8] != "0")
    return read


def _read_get_sr(dec, t, dest, srcs, preds):
    row = dec.table.get("get_sr")
    if row is None or t[11] != str(SR_THREAD_ID):
        return dec._instruction(t, preds)
    return Instruction(row, dest, srcs, {"sr": "thread_id"}, [], t[8] != "0")


def _read_jump(name):
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        target = int(t[12])
        if row is None or target < 0:
            return dec._instruction(t, preds)
        return Instruction(row, dest, srcs, {}, [dec.block(target)], t[8] != "0")
    return read


def _read_memory(name):  # device_load, device_store
    def read(dec, t, dest, srcs, preds):
        row = dec.table.get(name)
        fmt = FORMAT_NAMES.get(int(t[10]))
        if row is None or fmt is None:
            return dec._instruction(t, preds)
        return Instruction(row, dest, srcs, {"fmt": fmt, "shift": int(t[7])}, [], t[8] != "0")
    return read


def _read_convert(dec, t, dest, srcs, preds):
    row = dec.table.get("convert")
    mode = srcs[0].ref if srcs else None
    key = CONVERT_BY_MESA.get(mode.bits) if type(mode) is ir.Immediate else None
    if row is None or key is None:
        return dec._instruction(t, preds)
    return Instruction(row, dest, srcs[1:], {"mode": key[0]}, [], t[8] != "0")


FAST_READERS = {
    "fadd": _read_plain("fadd"), "fmul": _read_plain("fmul"), "fma": _read_plain("ffma"),
    "asr": _read_plain("asr"), "stop": _read_plain("stop"),
    "mov_imm": _read_mov_imm, "begin_cf": _read_begin_cf,
    "iadd": _read_shifted("iadd"), "imad": _read_shifted("imad"),
    **{op: _read_pseudo_bitop(table) for op, table in BITOP_TABLES.items()},
    "bitop": _read_with_imm("bitop", "tt"),
    **{op: _read_with_imm(op, "mask") for op in ("bfi", "bfeil", "extr")},
    "local_store": _read_export, "phi": _read_phi,
    "icmp": _read_compare("icmp", INT_COND_NAMES, True),
    "fcmp": _read_compare("fcmp", FLOAT_COND_NAMES, True),
    "icmpsel": _read_compare("icmpsel", INT_COND_NAMES, False),
    "fcmpsel": _read_compare("fcmpsel", FLOAT_COND_NAMES, False),
    **{op: _read_exec_branch(op, FLOAT_COND_NAMES if op in FLOAT_COND_OPS
                             else INT_COND_NAMES) for op in COND_ROWS},
    "pop_exec": _read_nested("pop_exec"), "break": _read_nested("break"),
    "get_sr": _read_get_sr,
    "jmp_exec_any": _read_jump("jmp_exec_any"), "jmp_exec_none": _read_jump("jmp_exec_none"),
    "device_load": _read_memory("device_load"), "device_store": _read_memory("device_store"),
    "convert": _read_convert,
}
# The Mesa opcodes read by a fast reader (the rest, and the lines a fast reader hands on:
# the general reader)
SIMPLE_READBACK = frozenset(FAST_READERS)


_TABLES: dict[str, tuple[dict, dict]] = {}


def _opcodes_for_level(level: str) -> dict:
    """`opcodes_for_level(level)`, made once per level while the opcode table stays as it was
    (a test may patch a row in)."""
    cached = _TABLES.get(level)
    if cached is None or cached[0] != OPCODES:
        cached = _TABLES[level] = (dict(OPCODES), opcodes_for_level(level))
    return cached[1]


class _Decoder:
    def __init__(self, names: Names, level: str) -> None:
        self.names = names
        self.level = level
        self.table = _opcodes_for_level(level)
        self.values: dict[int, ir.Value] = {}
        self.blocks: dict[int, ir.Block] = {}
        self.srcs = _Tokens(self._src)
        self.dests = _Tokens(self._dest)
        self.pops = False  # a pop_exec read: agx_lower_pseudo's breaks to read back
        self.readers = FAST_READERS  # ({}: every line by the general reader, as tests do)

    def block(self, index: int) -> ir.Block:
        found = self.blocks.get(index)
        if found is None:
            found = self.blocks[index] = ir.Block(self.names.blocks.get(index, f"b{index}"),
                                                  logical_successors=[])
        return found

    def value(self, index: int, size: int) -> ir.Value:
        if index not in self.values:
            known = self.names.values.get(index)
            name = known.name if known is not None and known.size == size else f"m{index}"
            self.values[index] = ir.Value(name, size)
        return self.values[index]

    def ref(self, token: str, as_dest: bool = False):
        kind, value, bits, mods = _token(token)
        if kind == NORMAL:
            ref = self.value(value, bits)
        elif kind == REGISTER:
            ref = ir.Register(value, bits)
        elif kind == IMMEDIATE and not as_dest:
            ref = ir.Immediate(value)
        elif kind == UNIFORM and not as_dest and value in self.names.uniforms:
            ref = self.names.uniforms[value]
        else:
            raise WireError(f"operand kind {kind} (value {value}) has no model spelling")
        return ref if as_dest else ir.Operand(ref, bool(mods & 1), bool(mods & 2))

    def _seed(self) -> None:
        """Every value of the input made at once, under its destination token and its
        unmodified source token (an answer reads most of them): what reading them one by
        one would make, without a miss per token. A value Mesa made is read as it comes."""
        known = {index: source for index, source in self.names.values.items()
                 if index not in self.values}
        tokens = _value_tokens(max(known, default=0) + 1)[1]
        made = [ir.Value(source.name, source.size) for source in known.values()]
        spelled = [tokens[source.size][index] for index, source in known.items()]
        self.values.update(zip(known, made))
        self.dests.update(zip(spelled, made))
        self.srcs.update(zip(spelled, map(_operand, made)))

    def _src(self, token: str) -> ir.Operand:
        kind, value, bits, mods = _token(token)
        if kind == NORMAL:  # the commonest: a value's, made here directly
            ref = self.values.get(value)
            if ref is None:
                ref = self.value(value, bits)
            return MODIFIED[mods](ref)
        if kind == IMMEDIATE or kind == REGISTER:  # values, not objects: shared by answers
            return _constant_operand(token)
        return self.ref(token)

    def _dest(self, token: str):
        kind, value, bits, mods = _token(token)
        if kind != NORMAL:
            return self.ref(token, as_dest=True)
        found = self.values.get(value)
        if found is None:  # self.value(value, bits), inline
            known = self.names.values.get(value)
            found = self.values[value] = ir.Value(
                known.name if known is not None and known.size == bits else f"m{value}", bits)
            if not mods and token not in self.srcs:  # its reads' operand, made now
                self.srcs[token] = _operand(found)
        return found

    def src(self, token: str) -> ir.Operand:
        """The operand a source token reads, made once per token and shared."""
        return self.srcs[token]

    def dest(self, token: str):
        """What a destination token writes, made once per token."""
        return self.dests[token]

    def instruction(self, tokens: list[str], preds: list[ir.Block]) -> ir.Instruction:
        """The model instruction of one answer line: the commonest Mesa opcodes by their
        fast readers, the rest by `_instruction` (the same instruction either way). The
        decoding loop (`decode`) does the same inline."""
        fast = self.readers.get(tokens[1])
        if fast is None:
            return self._instruction(tokens, preds)
        nd, ns, srcs = tokens[2], int(tokens[3]), self.srcs
        if nd == "1":
            return fast(self, tokens, self.dests[tokens[13]],
                        [srcs[token] for token in tokens[14:14 + ns]], preds)
        if nd == "0":
            return fast(self, tokens, None, [srcs[token] for token in tokens[13:13 + ns]],
                        preds)
        return self._instruction(tokens, preds)

    def _instruction(self, tokens: list[str], preds: list[ir.Block]) -> ir.Instruction:
        op = tokens[1]
        nd, ns, cond, inv, nest, shift, sat, mask, fmt, imm, target = map(int, tokens[2:13])
        dests = [self.dest(t) for t in tokens[13:13 + nd]]
        srcs = [self.src(t) for t in tokens[13 + nd:13 + nd + ns]]
        dest = dests[0] if dests else None
        attrs: dict[str, int | str] = {}
        blocks: list[ir.Block] = []
        name = op
        if op in BITOP_TABLES:
            name, attrs["tt"] = "bitop", BITOP_TABLES[op]
            if len(srcs) == 1:
                srcs.append(ir.Operand(ir.Immediate(0)))
        elif op == "begin_cf":
            name, dest, attrs["value"] = "mov_imm", ir.R0L, 0
        elif op == "bitop":
            attrs["tt"] = imm
        elif op in ("iadd", "imad"):
            attrs["shift"] = shift
            if sat:
                if op != "iadd" or shift:
                    raise WireError(f"{op}.sat with shift {shift} has no model spelling")
                name, attrs, sat = "uadd_sat", {}, 0
        elif op in ("bfi", "bfeil", "extr"):
            attrs["mask"] = imm
        elif op == "mov_imm":
            attrs["value"] = imm
        elif op == "fma":
            name = "ffma"
        elif op == "convert":
            key = CONVERT_BY_MESA.get(srcs[0].ref.bits) if srcs[0].is_immediate else None
            if key is None:
                raise WireError(f"convert with mode source {tokens[13 + nd]}")
            attrs["mode"] = key[0]
            srcs = srcs[1:]
        elif op in ("device_load", "device_store"):
            formats = {code: name for name, code in FORMATS.items()}
            attrs["fmt"], attrs["shift"] = formats[fmt], shift
        elif op == "get_sr":
            if imm != SR_THREAD_ID:
                raise WireError(f"get_sr sr {imm}")
            attrs["sr"] = "thread_id"
        elif op == "local_store":
            if not (srcs[1].is_immediate and srcs[2].is_immediate and srcs[2].ref.bits == 0):
                raise WireError("local_store that is not an export (slot and index immediates)")
            name, attrs["slot"], srcs = "export", srcs[1].ref.bits, srcs[:1]
        elif op in COND_ROWS:
            conds = FLOAT_CONDS if op in FLOAT_COND_OPS else INT_CONDS
            attrs["cond"] = {v: k for k, v in conds.items()}[cond]
            attrs["inv"], attrs["n"] = inv, nest
            if (op == "if_fcmp" and cond == FLOAT_CONDS["eq"] and not inv
                    and all(s.is_immediate and s.ref.bits == 0 and not s.abs and not s.neg
                            for s in srcs)):
                name, attrs, srcs = "push_exec", {"n": nest}, []
        elif op in ("icmp", "fcmp", "icmpsel", "fcmpsel"):
            conds = FLOAT_CONDS if op in FLOAT_COND_OPS else INT_CONDS
            attrs["cond"] = {v: k for k, v in conds.items()}[cond]
            if op in ("icmp", "fcmp"):
                attrs["inv"] = inv
        elif op in ("pop_exec", "break"):
            attrs["n"] = nest
            self.pops |= op == "pop_exec" and not nest
        elif op in ("jmp_exec_any", "jmp_exec_none"):
            if target < 0:
                raise WireError(f"{op} without a target")
            blocks = [self.block(target)]
        elif op == "phi":
            blocks = list(preds)
        elif op == "parallel_copy":
            row = self.table.get("parallel_copy")
            if row is None:
                raise WireError(f"parallel_copy is not a {self.level}-level opcode")
            return ir.Instruction(row, None, srcs, {}, [], False, dests)
        elif op not in ("fadd", "fmul", "asr", "stop"):
            raise WireError(f"Mesa opcode {op} has no model counterpart")
        row = self.table.get(name)
        if row is None:
            raise WireError(f"{name} is not a {self.level}-level opcode")
        if row.name == "parallel_copy" or len(dests) > 1:
            raise WireError(f"{op} with {len(dests)} destinations")
        return ir.Instruction(row, dest, srcs, attrs, blocks, bool(sat))

    def decode(self, lines: list[str]) -> tuple[ir.Function, Liveness | None]:
        source = self.names.function
        fn = ir.Function(source.name if source else "mesa",
                         list(source.uniforms) if source else [], [], self.level)
        live_in: dict[str, list[str]] = {}
        live_out: dict[str, list[str]] = {}
        instructions: list[ir.Instruction] | None = None
        preds: list[ir.Block] = []
        general, readers, srcs, dests = self._instruction, self.readers, self.srcs, self.dests
        if self.level != "machine":  # (allocated, an answer names registers, not values)
            self._seed()
        block = self.block
        for line in lines:
            tokens = line.split()
            if not tokens:
                continue
            head = tokens[0]
            if head == "i":
                if instructions is None:
                    raise WireError("an instruction before any block")
                # self.instruction(tokens, preds), inline
                # (the commonest source counts listed: no comprehension to call)
                fast = readers.get(tokens[1])
                nd, ns = tokens[2], tokens[3]
                if fast is None:
                    instructions.append(general(tokens, preds))
                elif nd == "1":
                    dest = dests[tokens[13]]
                    if ns == "2":
                        read = [srcs[tokens[14]], srcs[tokens[15]]]
                    elif ns == "0":
                        read = []
                    elif ns == "1":
                        read = [srcs[tokens[14]]]
                    else:
                        read = [srcs[token] for token in tokens[14:14 + int(ns)]]
                    instructions.append(fast(self, tokens, dest, read, preds))
                elif nd == "0":
                    if ns == "3":
                        read = [srcs[tokens[13]], srcs[tokens[14]], srcs[tokens[15]]]
                    elif ns == "0":
                        read = []
                    else:
                        read = [srcs[token] for token in tokens[13:13 + int(ns)]]
                    instructions.append(fast(self, tokens, None, read, preds))
                else:
                    instructions.append(general(tokens, preds))
            elif head == "block":
                index, s0, s1, npreds = map(int, tokens[1:5])
                current = block(index)
                current.logical_successors = [block(s) for s in (s0, s1) if s >= 0]
                preds = [block(int(p)) for p in tokens[5:5 + npreds]]
                instructions = current.instructions
                fn.blocks.append(current)
            elif head == "demand":
                fn.notes["demand"], fn.notes["bound"] = int(tokens[1]), int(tokens[2])
            elif head == "live":
                named = block(int(tokens[1])).name
                split = tokens.index("out")
                ins_, outs = tokens[3:split], tokens[split + 1:]
                live_in[named] = [self._live_name(int(v)) for v in ins_]
                live_out[named] = [self._live_name(int(v)) for v in outs]
        if self.pops:
            for current in fn.blocks:
                if any(ins.name == "pop_exec" for ins in current.instructions):
                    current.instructions = self._breaks(current.instructions)
        liveness = Liveness(live_in, live_out) if live_in or live_out else None
        return fn, liveness

    def _breaks(self, instructions: list[ir.Instruction]) -> list[ir.Instruction]:
        """agx_lower_pseudo's break, `mov_imm r0l, n; pop_exec 0`, read back as the model's
        `break n` (the row that is defined as exactly that pair)."""
        out: list[ir.Instruction] = []
        for ins in instructions:
            previous = out[-1] if out else None
            if (ins.name == "pop_exec" and ins.attrs.get("n") == 0 and previous is not None
                    and previous.name == "mov_imm" and previous.dest == ir.R0L
                    and previous.attrs.get("value", 0) > 0 and "break" in self.table):
                out[-1] = ir.Instruction(self.table["break"], None, [],
                                         {"n": previous.attrs["value"]})
                continue
            out.append(ins)
        return out

    def _live_name(self, index: int) -> str:
        if index in self.values:
            return self.values[index].name
        known = self.names.values.get(index)
        return known.name if known is not None else f"m{index}"


def decode(lines: list[str], names: Names, level: str) -> tuple[ir.Function, Liveness | None]:
    """Mesa's answer (the lines between `ok` and `end`) as a Function of `level`, and the
    live sets when the request ran `liveness`; raises WireError."""
    decoder = _Decoder(names, level)
    try:
        return decoder.decode(lines)
    finally:
        # its token tables read through the decoder's own methods: a cycle, undone so the
        # decoder goes when it returns (by its reference count, not the collector)
        decoder.srcs.read = decoder.dests.read = None
