"""The machine level: physical 16-bit register halves (`func.machine`).

What register allocation makes of an exec or vreg function (register phis and parallel
copies, until `lower_phis` and `lower_copies`); the last level.

Its hooks are the register levels' (`agxir.levels.registers`): the level's cut of the
machine opcode table, the register syntax and the machine verifier.
"""

from __future__ import annotations

from agxir import ir
from agxir.levels.registers import RegisterLevel

HOOKS = RegisterLevel(ir.MACHINE, "func.machine")
LEVEL, HEADER = HOOKS.level, HOOKS.header
opcodes, parse = HOOKS.opcodes, HOOKS.parse
print_function, verify = HOOKS.print_function, HOOKS.verify
