"""Printing an `ir.Function` in the canonical text form.

This module owns the canonical spelling: two-space indentation, single spaces, `, ` between
operands, modifiers as `.abs.neg`, every attribute of the row in row order, bitop aliases,
float immediates as Python reprs of their minifloat values. The parser reads back exactly
what is printed here: `print_function(parse_function(text)) == text` for canonical text.

The printer never raises on ill-formed IR (a verifier may print an instruction it is
rejecting); whatever it cannot spell canonically it prints as plainly as it can.
"""

from __future__ import annotations

from agxir import ir
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


def _mnemonic(ins: ir.Instruction) -> tuple[str, list[ir.Operand], set[str]]:
    """The name to print, the sources to print, and the attributes the name implies."""
    row = ins.opcode
    srcs = list(ins.srcs)
    for (attr, value), alias in ALIAS_NAMES.get(row.name, {}).items():
        if ins.attrs.get(attr) != value:
            continue
        if alias in UNARY_BITOP_ALIASES:
            if len(srcs) != len(row.srcs) or srcs[-1] != _ZERO:
                continue
            srcs = srcs[:-1]
        elif len(srcs) != len(row.srcs):
            continue
        return alias, srcs, {attr}
    return row.name, srcs, set()


def _src_kind(row: spec.Opcode, index: int) -> str:
    if index < len(row.srcs):
        return row.srcs[index].kind
    return spec.RAW


def _format_dest(dest: ir.Value | ir.Register | ir.VirtualRegister) -> str:
    if isinstance(dest, ir.Register):
        return dest.name
    if isinstance(dest, ir.VirtualRegister):
        return f"v{dest.index}:{dest.size}"
    return f"%{dest.name}:{dest.size}"


def format_instruction(ins: ir.Instruction) -> str:
    """One instruction on one line, without indentation."""
    row = ins.opcode
    name, srcs, implied = _mnemonic(ins)
    text = ""
    if ins.defs():
        text = ", ".join(_format_dest(dest) for dest in ins.defs()) + " = "
    text += name
    if ins.sat:
        text += ".sat"

    if ins.is_phi:
        parts = []
        for index, src in enumerate(srcs):
            label = ins.blocks[index].name if index < len(ins.blocks) else "?"
            parts.append(f"[{format_operand(src, spec.RAW)}, {label}]")
    else:
        parts = [format_operand(src, _src_kind(row, i)) for i, src in enumerate(srcs)]
    if parts:
        text += " " + ", ".join(parts)

    declared = {attr.name: attr for attr in row.attrs}
    attrs = []
    for attr in row.attrs:
        if attr.name in ins.attrs and attr.name not in implied:
            attrs.append(format_attribute(attr, attr.name, ins.attrs[attr.name]))
    for extra in sorted(set(ins.attrs) - set(declared)):  # ill-formed IR: show it anyway
        attrs.append(format_attribute(None, extra, ins.attrs[extra]))
    if attrs:
        text += " " + " ".join(attrs)

    if not ins.is_phi and ins.blocks:
        text += " -> " + ", ".join(block.name for block in ins.blocks)
    return text


def format_uniform(uniform: ir.Uniform) -> str:
    if uniform.buffer_bytes is not None:
        return f"{uniform.name}:ptr[{uniform.buffer_bytes}]"
    return f"{uniform.name}:{uniform.size}"


def print_function(fn: ir.Function) -> str:
    """The canonical text of `fn`, ending in a newline."""
    if fn.level != "ssa":
        from agxir.machine.text import print_machine_function  # builds on this module

        return print_machine_function(fn)
    uniforms = ", ".join(format_uniform(u) for u in fn.uniforms)
    lines = [f"func @{fn.name}({uniforms}) {{"]
    for block in fn.blocks:
        lines.append(f"{block.name}:")
        for ins in block.instructions:
            lines.append("  " + format_instruction(ins))
    lines.append("}")
    return "\n".join(lines) + "\n"
