"""Tokens of the IR text form, and `ParseError`.

This module owns the lexical layer only: comments, whitespace, line structure, the token
kinds and their positions. It knows nothing about opcodes. Every token records its 1-based
line and column so the parser can point errors at it.

Suffixes (`.abs`, `.neg`, `.sat`) are lexed as part of the word, value or immediate they are
attached to, without whitespace: `%a.abs.neg` is one VALUE token with two suffixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Token kinds.
IDENT = "identifier"  # [A-Za-z_][A-Za-z0-9_]*, possibly with suffixes
FUNCNAME = "function name"  # @[A-Za-z_][A-Za-z0-9_.]*
VALUE = "value"  # %[A-Za-z0-9_]+, possibly with suffixes
IMM = "immediate"  # '#' followed by the literal text (validated by the parser)
NUMBER = "number"  # [0-9][0-9A-Za-z_]* (validated by the parser)
PUNCT = "punctuation"  # ( ) { } [ ] , : = ->
NEWLINE = "end of line"
EOF = "end of file"

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCNAME_RE = re.compile(r"@([A-Za-z_][A-Za-z0-9_.]*)")
_VALUE_RE = re.compile(r"%([A-Za-z0-9_]+)")
# The immediate body is deliberately loose; the parser decides what it means and reports
# "malformed immediate" for anything that is not a decimal, hex or decimal-point literal.
_IMM_RE = re.compile(r"#(-?[0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?)")
_NUMBER_RE = re.compile(r"[0-9][0-9A-Za-z_]*")
_SINGLE_PUNCT = "(){}[],:="
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


@dataclass(frozen=True)
class Suffix:
    """A `.name` attached to a token, with the position of its dot."""

    name: str
    line: int
    col: int


@dataclass(frozen=True)
class Token:
    kind: str
    text: str  # the name without its sigil for FUNCNAME/VALUE, the literal for IMM
    line: int
    col: int
    suffixes: tuple[Suffix, ...] = field(default=())

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


def _suffixes(code: str, pos: int, lineno: int) -> tuple[tuple[Suffix, ...], int]:
    """Read `.ident` suffixes directly attached at `pos`."""
    found: list[Suffix] = []
    while pos < len(code) and code[pos] == ".":
        match = _IDENT_RE.match(code, pos + 1)
        if match is None:
            break
        found.append(Suffix(match.group(0), lineno, pos + 1))
        pos = match.end()
    return tuple(found), pos


def tokenize(text: str, filename: str = "<string>") -> list[Token]:
    """Split `text` into tokens; every line ends in a NEWLINE token, the text in EOF.

    Comments (`;` to end of line) are dropped. Raises ParseError on a character that cannot
    start a token.
    """
    tokens: list[Token] = []
    lines = text.split("\n")
    for index, raw in enumerate(lines):
        lineno = index + 1
        code = raw.split(";", 1)[0]
        pos = 0
        while pos < len(code):
            char = code[pos]
            col = pos + 1
            if char in _WHITESPACE:
                pos += 1
                continue
            if char in _SINGLE_PUNCT:
                tokens.append(Token(PUNCT, char, lineno, col))
                pos += 1
                continue
            if code.startswith("->", pos):
                tokens.append(Token(PUNCT, "->", lineno, col))
                pos += 2
                continue
            if char == "%":
                match = _VALUE_RE.match(code, pos)
                if match is None:
                    raise ParseError(filename, lineno, col, "expected a value name after '%'")
                suffixes, end = _suffixes(code, match.end(), lineno)
                tokens.append(Token(VALUE, match.group(1), lineno, col, suffixes))
                pos = end
                continue
            if char == "#":
                match = _IMM_RE.match(code, pos)
                assert match is not None  # the pattern matches any text after '#'
                suffixes, end = _suffixes(code, match.end(), lineno)
                tokens.append(Token(IMM, match.group(1), lineno, col, suffixes))
                pos = end
                continue
            if char == "@":
                match = _FUNCNAME_RE.match(code, pos)
                if match is None:
                    raise ParseError(filename, lineno, col, "expected a function name after '@'")
                tokens.append(Token(FUNCNAME, match.group(1), lineno, col))
                pos = match.end()
                continue
            match = _IDENT_RE.match(code, pos)
            if match is not None:
                suffixes, end = _suffixes(code, match.end(), lineno)
                tokens.append(Token(IDENT, match.group(0), lineno, col, suffixes))
                pos = end
                continue
            match = _NUMBER_RE.match(code, pos)
            if match is not None:
                tokens.append(Token(NUMBER, match.group(0), lineno, col))
                pos = match.end()
                continue
            raise ParseError(filename, lineno, col, f"unexpected character {char!r}")
        if lineno < len(lines) or code.strip(_WHITESPACE):
            tokens.append(Token(NEWLINE, "", lineno, len(code.rstrip(_WHITESPACE)) + 1))
    last = len(lines)
    last_col = len(lines[-1]) + 1
    tokens.append(Token(EOF, "", last, last_col))
    return tokens
