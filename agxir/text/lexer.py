"""Tokens of the IR text form, and `ParseError`.

This module owns the lexical layer only: comments, whitespace, line structure, the token
kinds and their positions. It knows nothing about opcodes. Every token records its 1-based
line and column so the parser can point errors at it.

Suffixes (`.abs`, `.neg`, `.sat`) are lexed as part of the word, value or immediate they are
attached to, without whitespace: `%a.abs.neg` is one VALUE token with two suffixes.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# Token kinds.
IDENT = "identifier"  # [A-Za-z_][A-Za-z0-9_]*, possibly with suffixes
FUNCNAME = "function name"  # @[A-Za-z_][A-Za-z0-9_.]*
VALUE = "value"  # %[A-Za-z0-9_]+, possibly with suffixes
IMM = "immediate"  # '#' followed by the literal text (validated by the parser)
NUMBER = "number"  # [0-9][0-9A-Za-z_]* (validated by the parser)
PUNCT = "punctuation"  # ( ) { } [ ] , : = ->
NEWLINE = "end of line"
EOF = "end of file"

_SUFFIXES = r"(?:\.[A-Za-z_][A-Za-z0-9_]*)*"  # `.ident` suffixes directly attached
# One pattern for every token, leading whitespace skipped: each line is split by one
# `finditer` instead of a dispatch per character. The immediate body is deliberately
# loose; the parser decides what it means and reports "malformed immediate" for anything
# that is not a decimal, hex or decimal-point literal. Whatever starts no token (a '%' or
# '@' without a name, any other character) is `bad`, reported as an error.
_TOKEN_RE = re.compile(
    r"[ \t\r]*(?:"
    r"(?P<punct>->|[(){}\[\],:=])"
    rf"|%(?P<value>[A-Za-z0-9_]+)(?P<value_suffixes>{_SUFFIXES})"
    rf"|#(?P<imm>-?[0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?)(?P<imm_suffixes>{_SUFFIXES})"
    r"|@(?P<funcname>[A-Za-z_][A-Za-z0-9_.]*)"
    rf"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)(?P<ident_suffixes>{_SUFFIXES})"
    r"|(?P<number>[0-9][0-9A-Za-z_]*)"
    r"|(?P<bad>[^ \t\r]))"
)
_WHITESPACE = " \t\r"


class ParseError(Exception):
    """A malformed program: `filename:line:col: message`, line and column 1-based."""

    def __init__(self, filename: str, line: int, col: int, message: str) -> None:
        super().__init__(filename, line, col, message)
        self.filename = filename
        self.line = line
        self.col = col
        self.message = message

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}: {self.message}"


class Suffix(NamedTuple):
    """A `.name` attached to a token, with the position of its dot."""

    name: str
    line: int
    col: int


class Token(NamedTuple):
    """One token. A named tuple: a long function is a million of them, and a tuple is made
    fastest and holds no per-object dictionary."""

    kind: str
    text: str  # the name without its sigil for FUNCNAME/VALUE, the literal for IMM
    line: int
    col: int
    suffixes: tuple[Suffix, ...] = ()

    def is_punct(self, text: str) -> bool:
        return self.kind == PUNCT and self.text == text

    def describe(self) -> str:
        """How an error message names this token."""
        if self.kind == PUNCT:
            return f"'{self.text}'"
        if self.kind in (NEWLINE, EOF):
            return self.kind
        if self.kind == VALUE:
            return f"value %{self.text}"
        if self.kind == FUNCNAME:
            return f"'@{self.text}'"
        if self.kind == IMM:
            return f"immediate #{self.text}"
        return f"'{self.text}'"


def _suffixes(text: str, lineno: int, start: int) -> tuple[Suffix, ...]:
    """The `.ident` suffixes in `text` (as matched), its first dot at 0-based `start`."""
    found = []
    col = start + 1  # 1-based, of the dot
    for name in text[1:].split("."):
        found.append(Suffix(name, lineno, col))
        col += len(name) + 1
    return tuple(found)


def tokenize(text: str, filename: str = "<string>") -> list[Token]:
    """Split `text` into tokens; every line ends in a NEWLINE token, the text in EOF.

    Comments (`;` to end of line) are dropped. Raises ParseError on a character that cannot
    start a token.
    """
    tokens: list[Token] = []
    append = tokens.append
    new = tuple.__new__  # Token(...) without the named tuple's Python-level __new__
    lines = text.split("\n")
    count = len(lines)
    finditer = _TOKEN_RE.finditer
    for index, raw in enumerate(lines):
        lineno = index + 1
        code = raw.split(";", 1)[0] if ";" in raw else raw
        for match in finditer(code):
            kind = match.lastgroup
            if kind == "punct":
                append(new(Token, (PUNCT, match[kind], lineno, match.start(kind) + 1, ())))
            elif kind == "value_suffixes":
                suffixes = match[kind]
                append(new(Token, (VALUE, match["value"], lineno, match.start("value"),
                                   _suffixes(suffixes, lineno, match.start(kind))
                                   if suffixes else ())))
            elif kind == "ident_suffixes":
                suffixes = match[kind]
                append(new(Token, (IDENT, match["ident"], lineno, match.start("ident") + 1,
                                   _suffixes(suffixes, lineno, match.start(kind))
                                   if suffixes else ())))
            elif kind == "number":
                append(new(Token, (NUMBER, match[kind], lineno, match.start(kind) + 1, ())))
            elif kind == "imm_suffixes":
                suffixes = match[kind]
                append(new(Token, (IMM, match["imm"], lineno, match.start("imm"),
                                   _suffixes(suffixes, lineno, match.start(kind))
                                   if suffixes else ())))
            elif kind == "funcname":
                append(new(Token, (FUNCNAME, match[kind], lineno, match.start(kind), ())))
            else:
                col = match.start(kind) + 1
                char = match[kind]
                if char == "%":
                    raise ParseError(filename, lineno, col, "expected a value name after '%'")
                if char == "@":
                    raise ParseError(filename, lineno, col, "expected a function name after '@'")
                raise ParseError(filename, lineno, col, f"unexpected character {char!r}")
        if lineno < count or code.strip(_WHITESPACE):
            append(new(Token, (NEWLINE, "", lineno, len(code.rstrip(_WHITESPACE)) + 1, ())))
    append(Token(EOF, "", count, len(lines[-1]) + 1))
    return tokens
