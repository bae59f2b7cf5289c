"""The exec level: SSA values and phis under AGX exec-mask control flow (`func.exec`).

What control-flow lowering makes of an SSA function: the SSA branch terminators give way to
the exec rows (`if_icmp`, `pop_exec`, ...; no parallel copies yet), and blocks list their
logical successors. Out-of-SSA lowers it to the vreg level, Mesa's register allocator
straight to the machine level.

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

LEVEL = ir.EXEC
HEADER = "func.exec"


def opcodes() -> dict[str, Opcode]:
    return opcodes_for_level(LEVEL.name)


def parse(tokens: list[Token], filename: str) -> ir.Function:
    return parse_machine_tokens(tokens, filename, LEVEL, opcodes())


def print_function(fn: ir.Function) -> str:
    return print_machine_function(fn)


def verify(fn: ir.Function) -> list[VerifyError]:
    return verify_machine(fn)
