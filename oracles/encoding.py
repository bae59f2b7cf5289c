"""The encoding oracle: every instruction a pass emits fits AGX's instruction encoding.

The limits are the field widths of Mesa's packer (`src/asahi/compiler/agx_pack.c`, Mesa
23.3.6), written here from that code and not read from this project's opcode table, so they
check the table as much as the passes:

- **Immediates.** An ALU source's immediate is an 8-bit field (`agx_pack_alu_src`,
  `agx_pack_cmpsel_src`: value < 0x100; a float immediate is an 8-bit minifloat there); a
  memory instruction's index takes 16 bits (`agx_pack_memory_index`: < 0x10000). The
  pseudo-instructions lower to ALU ones (icmp to icmpsel, signext and uadd_sat to iadd,
  imul to imad, the address math to iadd/imad), so their immediates are 8-bit too. Phis and
  parallel copies are not encoded: their immediates become `mov_imm`s.
- **Modifiers.** `.neg` has a bit only on iadd's second and imad's third source (bit 27)
  and on the float sources of float instructions (`agx_pack_float_mod`), which for fcmpsel
  are its compared sources only: its payloads are packed without modifiers (Mesa
  c8e331bf). `.abs` is a float source's abs bit, or on an integer source the zero-extension
  (iadd/imad's sign-extension bit left clear, the memory index's zero-extend bit, the
  other integer instructions' natural read); payloads and other raw sources have none.
- **Counters and shifts.** `if/else/while_*cmp` and `pop_exec` (and `push_exec`, an
  `if_fcmp`) pack the nesting count in two bits (bits 11-12: n <= 3); a `break` becomes
  `mov_imm r0l, n` (16 bits). iadd/imad's shift is asserted <= 4; a memory shift has two bits.
- **Registers** (machine level): naturally aligned (`assert_register_is_aligned`) and
  inside the 256 halves (`agx_pack_alu_dst`: reg < 0x100).

Not checked, because the model has no such field or Mesa fixes it in a pass not modelled
here: uniform numbering (uniforms are named, not placed in the 512 halves; a device base
uniform must sit below half 256), 64-bit uniforms in ALU sources (`agx_lower_uniform_sources`
moves them), 64-bit bitfield and select operations (`lower_64bit_postra`), bfi/bfeil/extr
masks (5 bits in the encoding; the table's 0..64 follows NIR's bit counts). The opcode
table's own limits (8- and 16-bit immediate slots, modifiers per slot) are the verifier's
too, and the harness runs the verifier first, so in a campaign this oracle reports what
the table allows and the hardware does not (today the nesting counts).

`problems(fn)` lists what does not fit; `encoding_failure(before, after)` is the step
oracle's question: a problem of `after` whose kind (opcode and limit) `before` did not
already have. A pass is judged on what it emitted, not on the program it was given.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir.ir import MACHINE, Function, Immediate, Instruction, Register
from agxir.opcodes.spec import INT, Opcode

__all__ = ["Problem", "encoding_failure", "problems"]

ALU_IMMEDIATE = 1 << 8  # agx_pack_alu_src / agx_pack_cmpsel_src: value < 0x100
INDEX_IMMEDIATE = 1 << 16  # agx_pack_memory_index: value < 0x10000
MEMORY_INDEX = {"device_load": 1, "device_store": 2}  # opcode -> the index source
NOT_ENCODED = frozenset({"phi", "parallel_copy"})  # their immediates become mov_imm
NEG_SLOTS = {"iadd": (1,), "imad": (2,)}  # bit 27
FLOAT_SLOTS = {  # agx_pack_float_mod: abs and neg on these sources
    "fadd": (0, 1), "fmul": (0, 1), "ffma": (0, 1, 2), "fmov": (0,),
    "fcmp": (0, 1), "fcmpsel": (0, 1), "fcmp_ballot": (0, 1),
    "if_fcmp": (0, 1), "else_fcmp": (0, 1), "while_fcmp": (0, 1),
}  # fmt: skip
NEST_BITS = {name: 2 for name in (
    "if_icmp", "if_fcmp", "else_icmp", "else_fcmp", "while_icmp", "while_fcmp",
    "pop_exec", "push_exec")}  # raw |= nest << 11, icond at bit 13
NEST_BITS["break"] = 16  # mov_imm r0l, n
SHIFT_LIMITS = {"iadd": 4, "imad": 4, "device_load": 3, "device_store": 3}
NUM_HALVES = 256


@dataclass(frozen=True)
class Problem:
    """One thing that does not fit: `kind` (opcode and limit) groups problems of one sort."""

    kind: tuple[str, str]
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _immediate_limit(ins: Instruction, position: int) -> int | None:
    if ins.name in NOT_ENCODED:
        return None
    if MEMORY_INDEX.get(ins.name) == position:
        return INDEX_IMMEDIATE
    return ALU_IMMEDIATE


def _source_problems(ins: Instruction) -> list[tuple[tuple[str, str], str]]:
    found = []
    row = ins.opcode
    name = ins.name
    floats_at = FLOAT_SLOTS.get(name, ())
    for position, src in enumerate(ins.srcs):
        ref = src.ref
        if type(ref) is Immediate or isinstance(ref, Immediate):
            limit = _immediate_limit(ins, position)
            if limit is not None and not 0 <= ref.bits < limit:
                width = limit.bit_length() - 1
                found.append(((name, f"imm{width}"), f"#{ref.bits} does not fit the "
                              f"{width}-bit immediate field of source {position} of {name}"))
        if not (src.neg or src.abs):  # the common case: no modifier to check
            continue
        floats = position in floats_at
        if src.neg and not floats and position not in NEG_SLOTS.get(name, ()):
            found.append(((name, "neg"), f"source {position} of {name} has no negate bit "
                          "for .neg"))
        if src.abs and not floats:
            spec = row.srcs[position] if not row.variadic and position < len(row.srcs) else None
            if spec is None or spec.kind != INT:
                found.append(((name, "abs"), f"source {position} of {name} has no abs or "
                              "zero-extend bit for .abs"))
    return found


def _field_problems(ins: Instruction) -> list[tuple[tuple[str, str], str]]:
    found = []
    attrs = ins.attrs
    if not attrs:
        return found
    bits = NEST_BITS.get(ins.name)
    nest = attrs.get("n")
    if bits is not None and isinstance(nest, int) and not 0 <= nest < 1 << bits:
        found.append(((ins.name, "nest"), f"n={nest} does not fit the {bits}-bit nesting "
                      f"count of {ins.name}"))
    limit = SHIFT_LIMITS.get(ins.name)
    shift = attrs.get("shift")
    if limit is not None and isinstance(shift, int) and not 0 <= shift <= limit:
        found.append(((ins.name, "shift"), f"shift={shift} is past the {ins.name} "
                      f"encoding's {limit}"))
    return found


def _register_problems(ins: Instruction) -> list[tuple[tuple[str, str], str]]:
    found = []
    registers = [d for d in ins.defs() if isinstance(d, Register)]
    registers += [s.ref for s in ins.srcs if isinstance(s.ref, Register)]
    for register in registers:
        size, half = register.size, register.half
        if size in (16, 32, 64) and half % (size // 16) == 0 and half + size // 16 <= NUM_HALVES:
            continue  # the common case, without the properties' calls
        if register.size not in (16, 32, 64) or not register.aligned:
            found.append(((ins.name, "alignment"), f"{register.name} is not naturally "
                          f"aligned ({register.size}-bit at half {register.half})"))
        elif register.half + register.size // 16 > NUM_HALVES:
            found.append(((ins.name, "register"), f"{register.name} is past the "
                          f"{NUM_HALVES} halves of the register file"))
    return found


@dataclass(frozen=True)
class _RowFields:
    """What the encoding allows a row's sources and fields, worked out once per row from
    the tables above (`_source_problems` and `_field_problems` spell out the problems)."""

    row: Opcode  # held, so that the id this is filed under stays the row's
    immediates: bool  # whether an immediate source is encoded (not a phi's or a copy's)
    index_position: int | None  # the source whose immediate takes INDEX_IMMEDIATE
    neg_at: frozenset[int]  # sources with a negate bit
    abs_at: frozenset[int]  # sources with an abs or zero-extend bit
    nest_bits: int | None
    shift_limit: int | None


_ROW_FIELDS: dict[int, _RowFields] = {}


def _row_fields(row: Opcode) -> _RowFields:
    found = _ROW_FIELDS.get(id(row))
    if found is None or found.row is not row:
        name = row.name
        floats_at = frozenset(FLOAT_SLOTS.get(name, ()))
        ints_at = frozenset(() if row.variadic else (
            position for position, spec in enumerate(row.srcs) if spec.kind == INT))
        found = _ROW_FIELDS[id(row)] = _RowFields(
            row, name not in NOT_ENCODED, MEMORY_INDEX.get(name),
            floats_at | frozenset(NEG_SLOTS.get(name, ())), floats_at | ints_at,
            NEST_BITS.get(name), SHIFT_LIMITS.get(name))
    return found


def _fits(ins: Instruction, machine: bool) -> bool:
    """Whether `_source_problems`, `_field_problems` and (at the machine level)
    `_register_problems` find nothing in `ins`, asked without spelling a problem."""
    row = ins.opcode
    fields = _ROW_FIELDS.get(id(row))
    if fields is None or fields.row is not row:
        fields = _row_fields(row)
    for position, src in enumerate(ins.srcs):
        ref = src.ref
        if ref.__class__ is Immediate or isinstance(ref, Immediate):
            if fields.immediates:
                limit = INDEX_IMMEDIATE if position == fields.index_position else ALU_IMMEDIATE
                if not 0 <= ref.bits < limit:
                    return False
        elif machine and isinstance(ref, Register):
            size, half = ref.size, ref.half
            if not (size in (16, 32, 64) and half % (size // 16) == 0
                    and half + size // 16 <= NUM_HALVES):
                return False
        if src.neg and position not in fields.neg_at:
            return False
        if src.abs and position not in fields.abs_at:
            return False
    attrs = ins.attrs
    if attrs:
        bits = fields.nest_bits
        nest = attrs.get("n")
        if bits is not None and isinstance(nest, int) and not 0 <= nest < 1 << bits:
            return False
        limit = fields.shift_limit
        shift = attrs.get("shift")
        if limit is not None and isinstance(shift, int) and not 0 <= shift <= limit:
            return False
    if not machine:
        return True
    dest = ins.dest
    for register in (dest,) if dest is not None else ins.dests:
        if isinstance(register, Register):
            size, half = register.size, register.half
            if not (size in (16, 32, 64) and half % (size // 16) == 0
                    and half + size // 16 <= NUM_HALVES):
                return False
    return True


def problems(fn: Function, *, reference: bool = False) -> list[Problem]:
    """Everything in `fn` that AGX's encoding cannot hold, in block order. Instructions that
    fit are passed by `_fits`; `reference` asks every one of them in full (the agreement
    tests' oracle)."""
    machine = fn.level == MACHINE
    found = []
    for block in fn.blocks:
        for index, ins in enumerate(block.instructions):
            if not reference and _fits(ins, machine):
                continue
            listed = _source_problems(ins) + _field_problems(ins)
            if machine:
                listed += _register_problems(ins)
            if listed:
                where = f"{block.name}, instruction {index} ({ins.name})"
                found += [Problem(kind, where, message) for kind, message in listed]
    return found


def encoding_failure(before: Function, after: Function) -> Problem | None:
    """The first problem of `after` of a kind `before` did not have (what the pass emitted,
    not what it was given), or None."""
    emitted = problems(after)
    if not emitted:
        return None
    given = {problem.kind for problem in problems(before)}
    return next((problem for problem in emitted if problem.kind not in given), None)
