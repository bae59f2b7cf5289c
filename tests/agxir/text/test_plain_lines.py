"""The parser's fast path for plain lines (agxir/text/plain.py) reads what the general path
reads: the same functions and the same errors, on the golden programs and on lines changed
one token at a time."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agxir import ir
from agxir.opcodes.table import OPCODES
from agxir.text import ParseError, parse_function, print_function
from agxir.text import parser as parser_module
from agxir.text.lexer import tokenize
from agxir.text.plain import plain_line

ROOT = Path(__file__).resolve().parents[3]
PIECES = ["%a", "%b:32", "u0", "#1", "#70000", "#1.5", "#-1", "#0x10", "shift=0", "shift=1",
          "shift=9", "cond=ult", "->", "entry", ",", "=", ":", "32", "016", "iadd", "mov", "not",
          "fadd", ".sat", ".abs", "[", "]", "phi", "jump", "stop", "export", "slot=0", "r2", ""]


def reading(text: str):
    try:
        fn = parse_function(text, "f")
    except ParseError as error:
        return str(error)
    definitions = {id(ins.dest): ins.dest.name for ins in fn.instructions()
                   if isinstance(ins.dest, ir.Value)}
    uses = [definitions.get(id(src.ref)) for ins in fn.instructions() for src in ins.srcs
            if isinstance(src.ref, ir.Value)]
    return print_function(fn), uses, [[ins.opcode for ins in b.instructions] for b in fn.blocks]


def texts() -> list[str]:
    found = [p.read_text() for p in sorted((ROOT / "tests" / "golden").rglob("*.agx"))][:40]
    rng = random.Random(1)
    changed = []
    for text in found:
        lines = text.split("\n")
        for _ in range(10):
            at = rng.randrange(len(lines))
            words = lines[at].split(" ")
            where = rng.randrange(len(words))
            if rng.random() < 0.5:
                words[where] = rng.choice(PIECES)
            else:
                words.insert(where, rng.choice(PIECES))
            changed.append("\n".join(lines[:at] + [" ".join(words)] + lines[at + 1:]))
    return found + changed


def test_the_fast_path_reads_what_the_general_path_reads(monkeypatch: pytest.MonkeyPatch):
    cases = texts()
    fast = [reading(text) for text in cases]
    monkeypatch.setattr(parser_module, "plain_line", lambda *args: None)
    general = [reading(text) for text in cases]
    assert fast == general
    assert sum(isinstance(r, str) for r in fast) > 50  # errors are among them


def test_the_fast_path_takes_plain_lines():
    tokens = tokenize("  %b:32 = iadd %a, u0 shift=0\n")
    found = plain_line(tokens, 0, OPCODES, {"u0": object()}, {})
    assert found is not None and found[0].name == "iadd" and found[4] == {"shift": 0}
    assert plain_line(tokens, 0, OPCODES, {}, {}) is None  # u0 undeclared: the general path
