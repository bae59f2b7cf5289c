"""The bridge's wire form, inbound: Mesa's answer (numeric lines from `fuzz/mesa/c/wire.c`)
back as a `Function`, with the input's names from the encoding's `Names`; a value or block
Mesa made itself is `%m<index>` / `b<index>`."""

from __future__ import annotations

from dataclasses import fields
from functools import lru_cache

from agxir import ir
from agxir.ir import MACHINE
from agxir.machine.opcodes import opcodes_for_level
from agxir.opcodes import OPCODES
from fuzz.mesa.opcodes import CONVERT_BY_MESA
from fuzz.mesa.wire_format import (
    BITOP_TABLES,
    COND_ROWS,
    FLOAT_COND_OPS,
    FLOAT_CONDS,
    FORMATS,
    IMMEDIATE,
    INT_CONDS,
    NORMAL,
    REGISTER,
    SIZE_BITS,
    SR_THREAD_ID,
    UNIFORM,
    ZERO,
    Liveness,
    Names,
    WireError,
    value_tokens,
)

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
        tokens = value_tokens(max(known, default=0) + 1)[1]
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
        if self.level != MACHINE:  # (allocated, an answer names registers, not values)
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
