"""Renders the opcode table as the Markdown reference in docs/opcodes.md.

`python -m agxir.opcodes.reference > docs/opcodes.md` regenerates it; a test keeps the
file in step with the table.
"""

from __future__ import annotations

from agxir.opcodes.spec import Attr, Opcode, Src
from agxir.opcodes.table import ROWS

HEADER = """# Opcode reference

Generated from `agxir/opcodes/table.py` by `python -m agxir.opcodes.reference`; do not edit
by hand. Semantics are in `agxir/opcodes/{integer,floating,effects}.py`, written once against
the bit-vector interface of `agxir/opcodes/bitvectors.py`. Where the model departs from AGX,
`docs/agx-departures.md` says so.

Source kinds: `int` (extended to the operation's width: sign-extended unless `.abs`, which
zero-extends), `float` (f16 or f32; a 16-bit source of a 32-bit operation is converted
exactly), `raw` (bits as they are), `addr` (a 64-bit base). Immediates: `imm8` 0..255,
`imm16` 0..65535 (both 16-bit values extended like narrow sources), `fimm8` an 8-bit AGX
minifloat.

| opcode | dest | sources | attributes | traits | meaning |
|---|---|---|---|---|---|
"""


def _source(src: Src) -> str:
    parts = [f"{src.name}: {src.kind} {'/'.join(map(str, src.sizes))}"]
    if src.mods:
        parts.append("." + "/.".join(sorted(src.mods)))
    if src.imm:
        parts.append(src.imm)
    if src.width_rule:
        parts.append({"dest": "= dest", "le_dest": "<= dest"}[src.width_rule])
    return " ".join(parts)


def _attr(attr: Attr) -> str:
    values = attr.values
    if isinstance(values, range):
        shown = f"{values.start}..{values.stop - 1}" if values.stop < 1 << 16 else "any"
    else:
        shown = "/".join(str(v) for v in values)
    return f"{attr.name}={shown}"


def _traits(row: Opcode) -> str:
    names = ["pure", "commutative", "side_effect", "may_ub", "wave", "terminator", "sat"]
    traits = [name for name in names if getattr(row, name)]
    if row.variadic:
        traits.append("variadic")
    return ", ".join(traits)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    lines = [HEADER.rstrip("\n")]
    for row in ROWS:
        dest = "/".join(map(str, row.dest_sizes)) if row.dest_sizes else "-"
        sources = "; ".join(_source(src) for src in row.srcs) or ("any, one per predecessor" if row.variadic else "-")
        attrs = " ".join(_attr(a) for a in row.attrs) or "-"
        if row.targets:
            attrs += f" ({row.targets} target{'s' if row.targets > 1 else ''})"
        lines.append(f"| `{row.name}` | {dest} | {sources} | {attrs} | {_traits(row)} | {_cell(row.summary)} |")
    bitop = next(row for row in ROWS if row.name == "bitop")
    lines.append("")
    lines.append("`bitop` aliases: " + ", ".join(
        f"`{name}` = tt {attrs['tt']:#x}" for name, attrs in bitop.aliases.items()
    ) + "; `mov` and `not` take one source (the second is `#0`).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
