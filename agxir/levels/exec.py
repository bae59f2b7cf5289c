"""The exec level: SSA values and phis under AGX exec-mask control flow (`func.exec`).

What control-flow lowering makes of an SSA function: the SSA branch terminators give way to
the exec rows (`if_icmp`, `pop_exec`, ...; no parallel copies yet), and blocks list their
logical successors. Out-of-SSA lowers it to the vreg level, Mesa's register allocator
straight to the machine level.

Its hooks are the register levels' (`agxir.levels.registers`): the level's cut of the
machine opcode table, the register syntax and the machine verifier.
"""

from __future__ import annotations

from agxir import ir
from agxir.levels.registers import RegisterLevel

HOOKS = RegisterLevel(ir.EXEC, "func.exec")
LEVEL, HEADER = HOOKS.level, HOOKS.header
opcodes, parse = HOOKS.opcodes, HOOKS.parse
print_function, verify = HOOKS.print_function, HOOKS.verify
