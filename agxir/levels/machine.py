"""The machine level: physical 16-bit register halves (`func.machine`).

What register allocation makes of an exec or vreg function (register phis and parallel
copies, until `lower_phis` and `lower_copies`); the last level.

Its hooks: the level's opcode table (`agxir.machine.opcodes.opcodes_for_level`), the
register syntax (`agxir.machine.text`) and the machine verifier (`agxir.machine.verifier`),
which the exec, vreg and machine levels share and which ask the level what differs.
"""

from __future__ import annotations

from agxir import ir
from agxir.machine.opcodes import opcodes_for_level
from agxir.machine.text import parse_machine_tokens, print_machine_function
from agxir.machine.verifier import verify_machine
from agxir.opcodes.spec import Opcode
from agxir.ssa_verifier import VerifyError
from agxir.text.lexer import Token

LEVEL = ir.MACHINE
HEADER = "func.machine"


def opcodes() -> dict[str, Opcode]:
    return opcodes_for_level(LEVEL.name)


def parse(tokens: list[Token], filename: str) -> ir.Function:
    return parse_machine_tokens(tokens, filename, LEVEL, opcodes())


def print_function(fn: ir.Function) -> str:
    return print_machine_function(fn)


def verify(fn: ir.Function) -> list[VerifyError]:
    return verify_machine(fn)
