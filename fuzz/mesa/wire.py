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

from dataclasses import dataclass, field
from functools import lru_cache

from agxir import ir
from agxir.machine.opcodes import opcodes_for_level
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
# The fields after the opcode of an instruction with none of its own: COND INV NEST SHIFT
# SAT MASK FORMAT IMM TARGET, all zero but TARGET (-1). SAT is the one often set.
PLAIN_FIELDS = ("0 0 0 0 0 0 0 0 -1", "0 0 0 0 1 0 0 0 -1")
# Model rows that go across as the Mesa opcode of the same fields, no field of their own
# but .sat: the common case, spelled without the general path.
PLAIN = frozenset({"fadd", "fmul", "ffma", "asr", "stop"})


class _Encoder:
    def __init__(self, fn: ir.Function) -> None:
        self.fn = fn
        self.value_index: dict[ir.Value, int] = {}
        self.block_index = {block: i for i, block in enumerate(fn.blocks)}
        self.uniform_half: dict[ir.Uniform, int] = {}
        # wire tokens without their MODS digit, one per value/uniform/register/immediate
        self.prefix: dict[object, str] = {}
        half = 0
        for uniform in fn.uniforms:
            align = uniform.size // 16
            half = (half + align - 1) // align * align
            self.uniform_half[uniform] = half
            self.prefix[uniform] = f"{UNIFORM}.{half}.{SIZE_CODE[uniform.size]}."
            half += align
        index = self.value_index
        prefix = self.prefix
        for block in fn.blocks:
            for ins in block.instructions:
                value = ins.dest
                if type(value) is ir.Value and value not in index:
                    prefix[value] = f"{NORMAL}.{len(index)}.{SIZE_CODE[value.size]}."
                    index[value] = len(index)

    def operand(self, src: ir.Operand) -> str:
        ref = src.ref
        found = self.prefix.get(ref)
        if found is None:
            found = self.prefix[ref] = self._prefix(ref)
        return found + MODS[src.abs | src.neg << 1]

    def _prefix(self, ref) -> str:
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
        """The wire line of `ins`: the commonest rows directly, the rest by `_instruction`
        (the same line either way)."""
        name = ins.opcode.name
        if name == "mov_imm" and type(ins.dest) is ir.Value:
            return (f"i mov_imm 1 0 0 0 0 0 {int(ins.sat)} 0 0 {ins.attrs['value']} -1 "
                    f"{self.prefix[ins.dest]}0")
        if name == "export":
            src = ins.srcs[0]
            size = src.size
            return (f"i local_store 0 3 0 0 0 0 {int(ins.sat)} {3 if size == 64 else 1} "
                    f"{FORMATS['i16'] if size == 16 else FORMATS['i32']} 0 -1 "
                    f"{self.operand(src)} {IMMEDIATE}.{ins.attrs['slot']}.0.0 {IMMEDIATE}.0.0.0")
        if (name == "iadd" or name == "imad") and type(ins.dest) is ir.Value:
            operand = self.operand
            return (f"i {name} 1 {len(ins.srcs)} 0 0 0 {ins.attrs['shift']} {int(ins.sat)} 0 "
                    f"0 0 -1 {self.prefix[ins.dest]}0 "
                    + " ".join([operand(s) for s in ins.srcs]))
        if name in PLAIN:
            dest = ins.dest
            operand = self.operand
            spelled = " ".join([operand(s) for s in ins.srcs])
            if dest is None:
                return (f"i {BY_MODEL[name].mesa} 0 {len(ins.srcs)} {PLAIN_FIELDS[ins.sat]} "
                        f"{spelled}").rstrip()
            return (f"i {BY_MODEL[name].mesa} 1 {len(ins.srcs)} {PLAIN_FIELDS[ins.sat]} "
                    f"{self.dest(dest)} {spelled}")
        return self._instruction(ins, preds)

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
        instruction = self.instruction
        for block in self.fn.blocks:
            succs = [block_index[s] for s in block.successors]
            if len(succs) > 2:
                raise Untranslatable(f"block {block.name} has {len(succs)} successors")
            succs += [-1] * (2 - len(succs))
            block_preds = preds[block]
            lines.append(f"block {block_index[block]} {succs[0]} {succs[1]} "
                         f"{len(block_preds)}" + "".join(f" {block_index[p]}"
                                                         for p in block_preds))
            lines.extend([instruction(ins, block_preds) for ins in block.instructions])
        return lines


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


# Mesa opcodes the decoder reads by its short path (no field but SAT, mov_imm's IMM,
# iadd/imad's SHIFT, an export's slot, a phi's predecessors, a pseudo-bitop's table): the
# model row of each
SIMPLE_READBACK = {"fadd": "fadd", "fmul": "fmul", "fma": "ffma", "asr": "asr", "stop": "stop",
                   "mov_imm": "mov_imm", "iadd": "iadd", "imad": "imad", "local_store": "export",
                   "phi": "phi", **{op: "bitop" for op in BITOP_TABLES}}
IMMEDIATE_ZERO = ir.Immediate(0)
MODIFIED = (ir.Operand, lambda ref: ir.Operand(ref, True, False),
            lambda ref: ir.Operand(ref, False, True), lambda ref: ir.Operand(ref, True, True))


class _Decoder:
    def __init__(self, names: Names, level: str) -> None:
        self.names = names
        self.level = level
        self.table = opcodes_for_level(level)
        self.values: dict[int, ir.Value] = {}
        self.blocks: dict[int, ir.Block] = {}
        self.srcs: dict[str, ir.Operand] = {}
        self.dests: dict[str, object] = {}

    def block(self, index: int) -> ir.Block:
        if index not in self.blocks:
            self.blocks[index] = ir.Block(self.names.blocks.get(index, f"b{index}"),
                                          logical_successors=[])
        return self.blocks[index]

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

    def src(self, token: str) -> ir.Operand:
        """The operand a source token reads: made once per token and shared (an Operand is
        frozen, and a token names one value within one answer). A value's, the commonest,
        is made here directly."""
        found = self.srcs.get(token)
        if found is not None:
            return found
        kind, value, bits, mods = _token(token)
        if kind == NORMAL:
            ref = self.values.get(value)
            if ref is None:
                ref = self.value(value, bits)
            found = MODIFIED[mods](ref) if mods else ir.Operand(ref)
        else:
            found = self.ref(token)
        self.srcs[token] = found
        return found

    def dest(self, token: str):
        found = self.dests.get(token)
        if found is None:
            kind, value, bits, mods = _token(token)
            if kind == NORMAL:  # the commonest: a value, made here directly
                found = self.values.get(value) or self.value(value, bits)
            else:
                found = self.ref(token, as_dest=True)
            self.dests[token] = found
        return found

    def _row(self, name: str, op: str, ndests: int):
        row = self.table.get(name)
        if row is None:
            raise WireError(f"{name} is not a {self.level}-level opcode")
        if ndests > 1:
            raise WireError(f"{op} with {ndests} destinations")
        return row

    def instruction(self, tokens: list[str], preds: list[ir.Block]) -> ir.Instruction:
        """The model instruction of one answer line: the commonest Mesa opcodes directly,
        the rest by `_instruction` (the same instruction either way)."""
        op = tokens[1]
        name = SIMPLE_READBACK.get(op)
        if name is None:
            return self._instruction(tokens, preds)
        nd, ns = int(tokens[2]), int(tokens[3])
        end = 13 + nd
        src = self.src
        srcs = [src(token) for token in tokens[end:end + ns]]
        if nd:
            dest = self.dests.get(tokens[13])
            if dest is None:
                dest = self.dest(tokens[13])
        else:
            dest = None
        sat = tokens[8] != "0"
        blocks: list[ir.Block] = []
        if op == "mov_imm":
            attrs: dict[str, int | str] = {"value": int(tokens[11])}
        elif name == "iadd" or name == "imad":
            if sat:
                return self._instruction(tokens, preds)
            attrs = {"shift": int(tokens[7])}
        elif name == "bitop":
            attrs = {"tt": BITOP_TABLES[op]}
            if len(srcs) == 1:
                srcs.append(ZERO)
        elif name == "export":
            if ns != 3:
                return self._instruction(tokens, preds)
            slot, index = srcs[1].ref, srcs[2].ref
            if type(slot) is not ir.Immediate or index != IMMEDIATE_ZERO:
                raise WireError("local_store that is not an export (slot and index immediates)")
            attrs, srcs = {"slot": slot.bits}, srcs[:1]
        elif name == "phi":
            attrs, blocks = {}, list(preds)
        else:
            attrs = {}
        return ir.Instruction(self._row(name, op, nd), dest, srcs, attrs, blocks, sat)

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
        pending: list[tuple[ir.Block, list[int], list[list[str]]]] = []
        live_in: dict[str, list[str]] = {}
        live_out: dict[str, list[str]] = {}
        current = None
        for line in lines:
            tokens = line.split()
            if not tokens or tokens[0] == "shader":
                continue
            if tokens[0] == "i":
                if current is None:
                    raise WireError("an instruction before any block")
                current[2].append(tokens)
            elif tokens[0] == "block":
                index, s0, s1, npreds = map(int, tokens[1:5])
                block = self.block(index)
                block.logical_successors = [self.block(s) for s in (s0, s1) if s >= 0]
                current = (block, [int(p) for p in tokens[5:5 + npreds]], [])
                pending.append(current)
                fn.blocks.append(block)
            elif tokens[0] == "demand":
                fn.notes["demand"], fn.notes["bound"] = int(tokens[1]), int(tokens[2])
            elif tokens[0] == "live":
                block = self.block(int(tokens[1]))
                split = tokens.index("out")
                ins_, outs = tokens[3:split], tokens[split + 1:]
                live_in[block.name] = [self._live_name(int(v)) for v in ins_]
                live_out[block.name] = [self._live_name(int(v)) for v in outs]
        instruction = self.instruction
        for block, preds, instructions in pending:
            pred_blocks = [self.block(p) for p in preds]
            block.instructions = [instruction(t, pred_blocks) for t in instructions]
            if any(t[1] == "pop_exec" for t in instructions):
                block.instructions = self._breaks(block.instructions)
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
    return _Decoder(names, level).decode(lines)
