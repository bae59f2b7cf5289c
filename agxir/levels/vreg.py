"""The vreg level: virtual registers and parallel copies instead of phis (`func.vreg`).

What out-of-SSA makes of an exec function; the vreg allocator lowers it to the machine
level.

Its hooks are the register levels' (`agxir.levels.registers`): the level's cut of the
machine opcode table, the register syntax and the machine verifier.
"""

from __future__ import annotations

from agxir import ir
from agxir.levels.registers import RegisterLevel

HOOKS = RegisterLevel(ir.VREG, "func.vreg")
LEVEL, HEADER = HOOKS.level, HOOKS.header
opcodes, parse = HOOKS.opcodes, HOOKS.parse
print_function, verify = HOOKS.print_function, HOOKS.verify
