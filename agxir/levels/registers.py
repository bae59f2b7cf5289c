"""What the exec, vreg and machine levels share: their hooks, built from the level.

The three levels are one syntax (`agxir.machine.text`: registers, exec rows, logical
successors), one verifier (`agxir.machine.verifier`, which asks the function's level what
differs) and one opcode table cut per level (`agxir.machine.opcodes.opcodes_for_level`);
only the level and its header differ. Each level's module (`agxir.levels.exec`, `vreg`,
`machine`) makes its hooks here, so the three are written once.
"""

from __future__ import annotations

from agxir import ir
from agxir.machine.opcodes import opcodes_for_level
from agxir.machine.text import parse_machine_tokens, print_machine_function
from agxir.machine.verifier import verify_machine
from agxir.opcodes.spec import Opcode
from agxir.ssa_verifier import VerifyError
from agxir.text.lexer import Token


class RegisterLevel:
    """The hooks of one register level: `opcodes()`, `parse(tokens, filename)`,
    `print_function(fn)` and `verify(fn)`, as `agxir.levels` asks a level's module."""

    def __init__(self, level: ir.Level, header: str) -> None:
        self.level = level
        self.header = header

    def opcodes(self) -> dict[str, Opcode]:
        return opcodes_for_level(self.level.name)

    def parse(self, tokens: list[Token], filename: str) -> ir.Function:
        return parse_machine_tokens(tokens, filename, self.level, self.opcodes())

    def print_function(self, fn: ir.Function) -> str:
        return print_machine_function(fn)

    def verify(self, fn: ir.Function) -> list[VerifyError]:
        return verify_machine(fn)
