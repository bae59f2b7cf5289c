"""The text front doors: `parse_function` and `print_function`, dispatched by level.

This module owns only the dispatch: which level a text's header names (`func` is the SSA
level, `func.exec`, `func.vreg` and `func.machine` the others) and which level a function
is at. Each level's syntax is its own (`agxir.levels`); the shared pieces are the lexer,
`agxir.text.parser.Parser` and `agxir.text.printer`.
"""

from __future__ import annotations

from agxir import ir
from agxir.levels import from_header, header_spellings, hooks
from agxir.text.lexer import IDENT, NEWLINE, ParseError, Token, tokenize


def header_level(tokens: list[Token], filename: str) -> ir.Level:
    """The level the function's keyword names, or ParseError."""
    index = 0
    while tokens[index].kind == NEWLINE:
        index += 1
    keyword = tokens[index]
    if keyword.kind == IDENT and keyword.text == "func" and keyword.suffixes:
        level = from_header(keyword.suffixes[0].name) if len(keyword.suffixes) == 1 else None
        if level is None:
            where = keyword.suffixes[-1]
            spellings = header_spellings()
            raise ParseError(filename, where.line, where.col,
                             f"expected {', '.join(spellings[:-1])} or {spellings[-1]}")
        return level
    if keyword.kind != IDENT or keyword.text != "func":
        found = keyword.describe()
        raise ParseError(filename, keyword.line, keyword.col, f"expected 'func', found {found}")
    return from_header(None)


def parse_function(text: str, filename: str = "<string>") -> ir.Function:
    """Parse one function in the text form; raise ParseError on malformed text."""
    with ir.collector_paused():  # (parsing makes many objects and no garbage cycles)
        tokens = tokenize(text, filename)
        return hooks(header_level(tokens, filename)).parse(tokens, filename)


def print_function(fn: ir.Function) -> str:
    """The canonical text of `fn`, ending in a newline."""
    return hooks(fn.level).print_function(fn)


__all__ = ["header_level", "parse_function", "print_function"]
