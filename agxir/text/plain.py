"""The parser's fast path: a plain instruction line read in one pass over its tokens.

A long function is almost all lines like `%v5:32 = iadd %v4, u0 shift=0`. `plain_line`
recognises such a line (an opcode of the level's table named as it is, no alias, phi,
variadic row, suffix, modifier or float immediate, every attribute given once and legal,
the row's operand and target counts, nothing after) and returns what the parser's general
path (`agxir.text.parser.Parser.instruction`) reads from it. For any other line it returns
None and the general path reads the line, with its error messages: it never raises and
changes nothing, so a line the fast path declines is parsed exactly as before.
"""

from __future__ import annotations

from agxir.opcodes import spec
from agxir.text.lexer import EOF, IDENT, IMM, NEWLINE, NUMBER, PUNCT, VALUE, Token
from agxir.text.literals import MAX_INT_IMMEDIATE, parse_int_literal

_SIZES = {"16": 16, "32": 32, "64": 64}

Plain = tuple[spec.Opcode, Token | None, int, list[Token], dict, list[Token], int]


def plain_line(tokens: list[Token], pos: int, table: dict[str, spec.Opcode],
               uniforms: dict, values: dict) -> Plain | None:
    """(row, destination token or None, its size, operand tokens, attributes in row order,
    target tokens, the position of the line's end) for a plain line at `pos`, else None."""
    token = tokens[pos]
    dest = None
    size = 0
    if token[0] == VALUE:
        window = tokens[pos:pos + 5]
        if len(window) < 5 or token[4] or token[1] in values:
            return None
        dest, colon, number, equals, token = window
        size = _SIZES.get(number[1], 0)
        if (colon[1] != ":" or colon[0] != PUNCT or number[0] != NUMBER or not size
                or equals[1] != "=" or equals[0] != PUNCT):
            return None
        pos += 4
    if token[0] != IDENT or token[4]:
        return None
    row = table.get(token[1])
    if row is None or row.variadic or row.name == "phi" or row.has_dest != (dest is not None):
        return None
    pos += 1
    operands = []
    for index, src in enumerate(row.srcs):
        if index:
            comma = tokens[pos]
            if comma[1] != "," or comma[0] != PUNCT:
                return None
            pos += 1
        token = tokens[pos]
        kind, text = token[0], token[1]
        if token[4]:
            return None
        if kind == IDENT:
            after = tokens[pos + 1]
            if text not in uniforms or (after[1] == "=" and after[0] == PUNCT):
                return None
        elif kind == IMM:
            if (src.kind == spec.FLOAT or not text.isascii() or not text.isdigit()
                    or len(text) > 5 or int(text) > MAX_INT_IMMEDIATE):
                return None
        elif kind != VALUE:
            return None
        operands.append(token)
        pos += 1
    token = tokens[pos]
    if token[0] in (VALUE, IMM) or (token[0] == PUNCT and token[1] in ",["):
        return None  # more operands than the row's (or a stray one): the general path says so
    declared = row.attrs
    given: dict = {}
    while True:
        name = tokens[pos]
        if name[0] != IDENT:
            break
        equals = tokens[pos + 1]
        if equals[1] != "=" or equals[0] != PUNCT:
            return None  # an operand where none belongs
        value_token = tokens[pos + 2]
        if name[4] or value_token[4] or name[1] in given:
            return None
        for attr in declared:
            if attr.name == name[1]:
                break
        else:
            return None
        if attr.is_enum:
            value = value_token[1] if value_token[0] == IDENT else None
        else:
            value = parse_int_literal(value_token[1]) if value_token[0] == NUMBER else None
        if value is None or value not in attr.values:
            return None
        given[name[1]] = value
        pos += 3
    if len(given) != len(declared):
        return None
    attrs = {attr.name: given[attr.name] for attr in declared}
    targets = []
    arrow = tokens[pos]
    if arrow[1] == "->" and arrow[0] == PUNCT:
        pos += 1
        while True:
            label = tokens[pos]
            if label[0] != IDENT or label[4]:
                return None
            targets.append(label)
            pos += 1
            comma = tokens[pos]
            if comma[1] != "," or comma[0] != PUNCT:
                break
            pos += 1
    if len(targets) != row.targets or tokens[pos][0] not in (NEWLINE, EOF):
        return None
    return row, dest, size, operands, attrs, targets, pos
