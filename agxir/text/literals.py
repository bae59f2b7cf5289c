"""Literals of the IR text form: integer literals, attribute values as error messages name
them, and the alias mnemonics of the opcode table. Shared by the parser and its fast path
for plain lines (`agxir.text.plain`)."""

from __future__ import annotations

import re

from agxir.opcodes import spec
from agxir.opcodes.table import ROWS

MAX_INT_IMMEDIATE = 0xFFFF

_DECIMAL_RE = re.compile(r"[0-9]+")
_HEX_RE = re.compile(r"0[xX][0-9a-fA-F]+")
FLOAT_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _alias_table() -> dict[str, tuple[spec.Opcode, dict[str, int | str]]]:
    """Every alias mnemonic a row declares, with the attributes it fixes."""
    aliases: dict[str, tuple[spec.Opcode, dict[str, int | str]]] = {}
    for row in ROWS:
        for alias, attrs in row.aliases.items():
            aliases[alias] = (row, dict(attrs))
    return aliases


ALIASES = _alias_table()


# Longer literals are out of every range the IR has; they are read as TOO_LARGE rather than
# converted (Python refuses decimal strings over 4300 digits, and huge ints cost time).
MAX_LITERAL_CHARS = 40
TOO_LARGE = 1 << 160
MAX_BUFFER_BYTES = 1 << 32  # buffers sit above 2^32 and are addressed with 32-bit offsets


def parse_int_literal(text: str) -> int | None:
    """A non-negative decimal or 0x-hex literal, or None; TOO_LARGE for a literal longer
    than MAX_LITERAL_CHARS (every range check then rejects it with its own message)."""
    if 0 < len(text) <= MAX_LITERAL_CHARS and text.isascii() and text.isdigit():
        return int(text, 10)  # the common case, without the patterns
    if len(text) > MAX_LITERAL_CHARS and (_DECIMAL_RE.fullmatch(text) or _HEX_RE.fullmatch(text)):
        return TOO_LARGE
    if _DECIMAL_RE.fullmatch(text):
        return int(text, 10)
    if _HEX_RE.fullmatch(text):
        return int(text, 16)
    return None


def describe_values(attr: spec.Attr) -> str:
    """The legal values of an attribute, for error messages."""
    values = attr.values
    if isinstance(values, range) and values.step == 1 and values.stop > values.start:
        low, high = values.start, values.stop - 1
        if attr.hex:
            return f"{low:#x}..{high:#x}"
        return f"{low}..{high}"
    return ", ".join(str(v) for v in values)
