"""Printing an `ir.Function` in the canonical text form.

This module owns the canonical spelling: two-space indentation, single spaces, `, ` between
operands, modifiers as `.abs.neg`, every attribute of the row in row order, bitop aliases,
float immediates as Python reprs of their minifloat values. The parser reads back exactly
what is printed here: `print_function(parse_function(text)) == text` for canonical text.

`format_instruction` and `print_ssa_function` are the compiled core's (agxir/ccore_src/
print.c) where it is built, else the `*_reference` functions here, which stay the
specification: both give the same text (tests/agxir/test_ccore_print.py).

The printer never raises on ill-formed IR (a verifier may print an instruction it is
rejecting); whatever it cannot spell canonically it prints as plainly as it can.
"""

from __future__ import annotations

from agxir import ir
from agxir.native import CORE
from agxir.opcodes import spec
from agxir.opcodes.operands import minifloat_value
from agxir.opcodes.table import ROWS, UNARY_BITOP_ALIASES


def _alias_names() -> dict[str, dict[tuple[str, int | str], str]]:
    """Per opcode: (attribute, value) -> the alias mnemonic that fixes it."""
    names: dict[str, dict[tuple[str, int | str], str]] = {}
    for row in ROWS:
        for alias, attrs in row.aliases.items():
            if len(attrs) == 1:
                ((attr, value),) = attrs.items()
                names.setdefault(row.name, {})[(attr, value)] = alias
    return names


ALIAS_NAMES = _alias_names()
_ZERO = ir.Operand(ir.Immediate(0))


def format_operand(op: ir.Operand, src_kind: str) -> str:
    """One source: `%v`, a uniform name or `#imm`, then `.abs` and `.neg`."""
    ref = op.ref
    if isinstance(ref, ir.Value):
        text = f"%{ref.name}"
    elif isinstance(ref, ir.Register | ir.VirtualRegister):
        # Modifiers attach to the name, before a size: `v3.abs:32`, `h5.neg:32`.
        name, _, size = (ref.name if isinstance(ref, ir.Register) else repr(ref)).partition(":")
        mods = (".abs" if op.abs else "") + (".neg" if op.neg else "")
        return name + mods + (f":{size}" if size else "")
    elif isinstance(ref, ir.Uniform):
        text = ref.name
    elif src_kind == spec.FLOAT and 0 <= ref.bits <= 0xFF:
        text = "#" + repr(minifloat_value(ref.bits))
    else:
        text = f"#{ref.bits}"
    if op.abs:
        text += ".abs"
    if op.neg:
        text += ".neg"
    return text


def format_attribute(attr: spec.Attr | None, name: str, value: int | str) -> str:
    if attr is not None and attr.hex and isinstance(value, int) and value >= 0:
        return f"{name}={value:#x}"
    return f"{name}={value}"


def source_kind(row: spec.Opcode, index: int) -> str:
    if index < len(row.srcs):
        return row.srcs[index].kind
    return spec.RAW


def format_dest(dest: ir.Value | ir.Register | ir.VirtualRegister) -> str:
    if isinstance(dest, ir.Register):
        return dest.name
    if isinstance(dest, ir.VirtualRegister):
        return f"v{dest.index}:{dest.size}"
    return f"%{dest.name}:{dest.size}"


class _RowFacts:
    """What printing needs of one opcode row, worked out once per row (`_facts`)."""

    __slots__ = ("aliases", "kinds", "attrs", "declared", "is_phi")

    def __init__(self, row: spec.Opcode) -> None:
        self.aliases = tuple(
            (attr, value, alias, alias in UNARY_BITOP_ALIASES)
            for (attr, value), alias in ALIAS_NAMES.get(row.name, {}).items()
        )
        self.kinds = tuple(src.kind for src in row.srcs)
        self.attrs = tuple((attr.name, attr) for attr in row.attrs)
        self.declared = frozenset(attr.name for attr in row.attrs)
        self.is_phi = row.name == "phi"


_FACTS: dict[int, tuple[spec.Opcode, _RowFacts]] = {}  # id(row) -> (row, its facts)


def _facts(row: spec.Opcode) -> _RowFacts:
    found = _FACTS.get(id(row))
    if found is None or found[0] is not row:
        found = _FACTS[id(row)] = (row, _RowFacts(row))
    return found[1]


def format_instruction_reference(ins: ir.Instruction) -> str:
    """One instruction on one line, without indentation: the reference `format_instruction`
    (agxir/ccore_src/print.c follows it)."""
    row = ins.opcode
    found = _FACTS.get(id(row))
    facts = found[1] if found is not None and found[0] is row else _facts(row)
    srcs = ins.srcs
    name, implied = row.name, None
    if facts.aliases:  # the alias whose attribute the instruction has, if it spells it
        for attr, value, alias, unary in facts.aliases:
            if ins.attrs.get(attr) != value:
                continue
            if unary:
                if len(srcs) != len(row.srcs) or srcs[-1] != _ZERO:
                    continue
                srcs = srcs[:-1]
            elif len(srcs) != len(row.srcs):
                continue
            name, implied = alias, attr
            break
    dest = ins.dest
    if dest is not None:
        if type(dest) is ir.Value:
            text = f"%{dest.name}:{dest.size} = {name}"
        elif type(dest) is ir.Register:
            text = f"{dest.name} = {name}"
        else:
            text = f"{format_dest(dest)} = {name}"
    elif ins.dests:
        text = ", ".join(format_dest(d) for d in ins.dests) + " = " + name
    else:
        text = name
    if ins.sat:
        text += ".sat"

    if facts.is_phi:
        parts = []
        for index, src in enumerate(srcs):
            label = ins.blocks[index].name if index < len(ins.blocks) else "?"
            parts.append(f"[{format_operand(src, spec.RAW)}, {label}]")
    else:
        kinds = facts.kinds
        parts = []
        for index, src in enumerate(srcs):
            # plain values, registers and uniforms spelled here, the rest by format_operand
            ref = src.ref
            kind = type(ref)
            if src.abs or src.neg:
                parts.append(format_operand(src, kinds[index] if index < len(kinds) else spec.RAW))
            elif kind is ir.Value:
                parts.append("%" + ref.name)
            elif kind is ir.Register and ":" not in (spelled := ref.name):
                parts.append(spelled)
            elif kind is ir.Uniform:
                parts.append(ref.name)
            else:
                parts.append(format_operand(src, kinds[index] if index < len(kinds) else spec.RAW))
    if parts:
        text += " " + ", ".join(parts)

    attrs = ins.attrs
    if attrs:
        shown = []
        for attr_name, attr in facts.attrs:
            if attr_name in attrs and attr_name != implied:
                if attr.hex:
                    shown.append(format_attribute(attr, attr_name, attrs[attr_name]))
                else:
                    shown.append(f"{attr_name}={attrs[attr_name]}")
        if not facts.declared.issuperset(attrs):  # ill-formed IR: show it anyway
            for extra in sorted(set(attrs) - facts.declared):
                shown.append(format_attribute(None, extra, attrs[extra]))
        if shown:
            text += " " + " ".join(shown)

    if not facts.is_phi and ins.blocks:
        text += " -> " + ", ".join(block.name for block in ins.blocks)
    return text


def format_uniform(uniform: ir.Uniform) -> str:
    if uniform.buffer_bytes is not None:
        return f"{uniform.name}:ptr[{uniform.buffer_bytes}]"
    return f"{uniform.name}:{uniform.size}"


def print_ssa_function_reference(fn: ir.Function) -> str:
    """The reference `print_ssa_function` (agxir/ccore_src/print.c follows it)."""
    uniforms = ", ".join(format_uniform(u) for u in fn.uniforms)
    lines = [f"func @{fn.name}({uniforms}) {{"]
    for block in fn.blocks:
        lines.append(f"{block.name}:")
        for ins in block.instructions:
            lines.append("  " + format_instruction_reference(ins))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _core_facts(row: spec.Opcode) -> tuple | None:
    """What the compiled printer needs of `row` (from the same `_RowFacts` the reference
    reads), or None where a name is not a plain str (the reference then prints)."""
    facts = _facts(row)
    names = [row.name, *(alias[0] for alias in facts.aliases),
             *(name for name, _ in facts.attrs)]
    if any(type(name) is not str for name in names):
        return None
    return (row.name, facts.is_phi, facts.aliases, tuple(kind == spec.FLOAT for kind in facts.kinds),
            tuple((name, bool(attr.hex)) for name, attr in facts.attrs), facts.declared)


# The compiled printer (agxir.native) where it is built: the same text as the references
# (tests/agxir/test_ccore_print.py), several times faster. A core built before it had
# printing leaves the references in place.
_PRINTING = CORE is not None and hasattr(CORE, "print_function")
if _PRINTING:
    CORE.bind_printer(
        _core_facts, format_instruction_reference,
        tuple("#" + repr(minifloat_value(bits)) for bits in range(256)), _ZERO,
    )
    format_instruction = CORE.format_instruction
    _core_print = CORE.print_function

    def print_ssa_function(fn: ir.Function) -> str:
        """The canonical text of an SSA function, ending in a newline (the SSA level's
        printing hook; `agxir.text.print_function` dispatches by level)."""
        text = _core_print(fn, False)
        return print_ssa_function_reference(fn) if text is NotImplemented else text
else:
    format_instruction = format_instruction_reference
    print_ssa_function = print_ssa_function_reference
