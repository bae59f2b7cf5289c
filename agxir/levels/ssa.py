"""The SSA level: the generator's and the SSA passes' functions (`func @f(...)`).

Its hooks: every row of the opcode table (`agxir.opcodes.table.OPCODES`), the shared parser
as it is (`agxir.text.parser.Parser`), the SSA printer and the SSA verifier
(`agxir.ssa_verifier`). It is lowered to the exec level by control-flow lowering.
"""

from __future__ import annotations

from agxir import ir
from agxir.opcodes.spec import Opcode
from agxir.opcodes.table import OPCODES
from agxir.ssa_verifier import VerifyError, verify_ssa
from agxir.text.lexer import Token
from agxir.text.parser import Parser
from agxir.text.printer import print_ssa_function

LEVEL = ir.SSA
HEADER = "func"


def opcodes() -> dict[str, Opcode]:
    return OPCODES


def parse(tokens: list[Token], filename: str) -> ir.Function:
    return Parser(tokens, filename, LEVEL, opcodes()).parse()


def print_function(fn: ir.Function) -> str:
    return print_ssa_function(fn)


def verify(fn: ir.Function) -> list[VerifyError]:
    return verify_ssa(fn)
