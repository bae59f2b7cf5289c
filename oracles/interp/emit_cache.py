"""The interpreters' cache of emitted code: one entry per distinct block (SSA) or unit of
straight-line code (wave), keyed by everything its emission reads.

The harness runs every step's output of a program through an interpreter, and passes change
few blocks, so most blocks are emitted again exactly as before (three in four, over the
default campaign). Emission runs each opcode's semantics against an emitter in Python; a
hit instead gives the emitted text (and what else the caller keeps of it) and the
constants the unit used, in the order it first used them, so that the function's constant
table (filled in first-use order across units) comes out as fresh emission builds it.

A key (`unit_keys`) holds the caller's context (the wave interpreter's: forwarding, the
unit's block number, whether it starts its block, the names only it uses), then per
instruction its canonical text (`agxir.text.format_instruction`: names, destination sizes,
registers, virtual registers with sizes, modifiers, attributes, phi labels, targets), its
opcode row, per source and destination what the text does not say (a value's width, a
uniform's width and whether it is a buffer, a virtual register's widest access in the
function, the operand's kind; for the SSA interpreter whether a value is stored for other
blocks), and the numbers of the blocks it names that emission reads. The emitters name
values and uniforms by name but remember them by object within a unit, so a function in
which one name stands for two objects gets no keys and is emitted afresh.

`unit_keys` is the lane VM's (oracles/interp/lanevm_src/keys.c) where the extension is
built, else `unit_keys_reference`, the specification, which the C follows part for part
(tests/oracles/interp/test_unit_keys.py).

Cached entries hold only strings, numbers and tuples of them, which the garbage collector
stops tracking: a cache of many entries costs its collections nothing.
"""

from __future__ import annotations

from agxir.ir import Immediate, Instruction, Register, Uniform, Value, VirtualRegister
from agxir.machine.opcodes import WAVE_BRANCHES
from agxir.text import format_instruction
from oracles.interp.vm import LANEVM

# Off: every block is emitted afresh (the tests compare both ways).
enabled = True


class EmitCache:
    """A bounded map from a key to an emission's result, cleared when full (as the runner's
    cache of compiled blocks is), counting hits and misses."""

    def __init__(self, limit: int):
        self.limit = limit
        self.entries: dict[tuple, tuple] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple) -> tuple | None:
        found = self.entries.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: tuple, value: tuple) -> None:
        if len(self.entries) >= self.limit:
            self.entries.clear()
        self.entries[key] = value

    def clear(self) -> None:
        self.entries.clear()
        self.hits = self.misses = 0


# Hits come from the steps of the program being checked (a cache of 1,000 entries hits as
# often as one of 20,000 over 60 programs of the default campaign); an entry holds about 3 KB.
SSA_BLOCKS = EmitCache(4096)
WAVE_UNITS = EmitCache(4096)

# id -> opcode row, for every row a key has named: held here, so no other object ever has
# an id a key holds (rows are frozen dataclasses with a dict field, so not hashable).
_ROWS: dict[int, object] = {}

# Operand kinds as key parts; a value's part is its width (an int), a uniform's a tuple.
_REGISTER = "r"
_IMMEDIATE = "#"
_VALUE_DEST = "%"
_PLAIN_VREG = ("v", 0)  # accessed at one size only


def unit_keys(units: list[list[Instruction]], prefixes: list[tuple], number: dict,
              escaping: set | None = None, first_unit: dict | None = None,
              vreg_widths: dict[str, int] | None = None) -> list[tuple | None]:
    """`unit_keys_reference`'s keys, built in C where the lane VM is built (4.5 against 7.5
    us a unit over the tests' corpora: the loop over sources and destinations, not the
    text, was most of the reference's time), else by the reference, which also builds them
    where the C declines (NotImplemented: arguments of another type, an exception met)."""
    if native_unit_keys is not None:
        keys = native_unit_keys(units, prefixes, number, escaping, first_unit, vreg_widths)
        if keys is not NotImplemented:
            return keys
    return unit_keys_reference(units, prefixes, number, escaping, first_unit, vreg_widths)


def unit_keys_reference(units: list[list[Instruction]], prefixes: list[tuple], number: dict,
                        escaping: set | None = None, first_unit: dict | None = None,
                        vreg_widths: dict[str, int] | None = None) -> list[tuple | None]:
    """The key of each unit (a list of instructions; the SSA interpreter's blocks, the wave
    interpreter's units of straight-line code): the caller's context (`prefixes`, one tuple
    of the same length per unit), then per instruction its text, its row, per source and
    destination a part saying its kind and what the text does not say of it (with their
    counts, so the parts read back one way only), and what it names of other blocks: a
    phi the `number` of each source block, a wave branch (`first_unit` given) the first
    unit of its target. A value destination's part says, where `escaping` is given, whether
    it is in it. All None when a name stands for two value or two uniform objects, or an
    operand is of a kind not known here: the emitters keep values and uniforms by object
    within a block, so such a function is emitted afresh."""
    values: dict[str, Value] = {}
    uniforms: dict[str, Uniform] = {}
    vreg_codes = {name: ("v", width) for name, width in (vreg_widths or {}).items()}
    rows = _ROWS
    text_of = format_instruction
    no_keys = [None] * len(units)
    keys = []
    for instructions, prefix in zip(units, prefixes, strict=True):
        parts = list(prefix)
        append = parts.append
        for ins in instructions:
            row = ins.opcode
            if rows.setdefault(id(row), row) is not row:
                return no_keys  # (cannot happen while _ROWS holds its rows)
            srcs = ins.srcs
            parts += (text_of(ins), id(row), len(srcs))
            for src in srcs:
                ref = src.ref
                kind = type(ref)
                if kind is Value:
                    append(ref.size)
                    if values.setdefault(ref.name, ref) is not ref:
                        return no_keys
                elif kind is Immediate:
                    append(_IMMEDIATE)
                elif kind is Register:
                    append(_REGISTER)
                elif kind is VirtualRegister:
                    append(vreg_codes.get(ref.name, _PLAIN_VREG))
                elif kind is Uniform:
                    append(("u", ref.size, ref.buffer_bytes is not None))
                    if uniforms.setdefault(ref.name, ref) is not ref:
                        return no_keys
                else:
                    return no_keys
            dest = ins.dest
            dests = ins.dests if dest is None else (dest,)
            append(len(dests))
            for dest in dests:
                kind = type(dest)
                if kind is Value:
                    # (its width is in the text)
                    append(_VALUE_DEST if escaping is None else dest in escaping)
                    if values.setdefault(dest.name, dest) is not dest:
                        return no_keys
                elif kind is Register:
                    append(_REGISTER)
                elif kind is VirtualRegister:
                    append(vreg_codes.get(dest.name, _PLAIN_VREG))
                else:
                    return no_keys
            blocks = ins.blocks
            if not blocks:
                append(None)
            elif row.name == "phi":
                append(tuple([number.get(block) for block in blocks]))
            elif first_unit is not None and row.name in WAVE_BRANCHES:
                append(first_unit.get(blocks[0]))
            else:
                append(None)
        keys.append(tuple(parts))
    return keys


# The C keys (None: the extension is not built, or built before keys.c), bound once to what
# the reference names.
native_unit_keys = getattr(LANEVM, "unit_keys", None)
if native_unit_keys is not None:
    LANEVM.key_setup(Value, Immediate, Register, VirtualRegister, Uniform, format_instruction,
                     _ROWS, WAVE_BRANCHES, (_REGISTER, _IMMEDIATE, _VALUE_DEST, _PLAIN_VREG))


def emitted(cache: EmitCache, key: tuple | None, emitter, emit) -> tuple:
    """(what `emit()` gives, the constants it used in first-use order) for the unit `key`
    names: from `cache`, else by `emit` run with a fresh constant table on `emitter`, kept
    under `key` (None: no key, emitted afresh and not kept)."""
    entry = cache.get(key) if key is not None else None
    if entry is None:
        emitter.constants = {}
        entry = (emit(), tuple(emitter.constants))
        if key is not None:
            cache.put(key, entry)
    return entry


def merge_constants(constants: dict[int, None], used: tuple[int, ...]) -> None:
    """Add a unit's constants (in the order it first used them) to the function's, as
    emitting the unit with the function's table would have."""
    for value in used:
        if value not in constants:
            constants[value] = None
