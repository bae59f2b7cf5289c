"""The machine level: exec-mask control flow, virtual and physical registers, and the
passes that lower an SSA function to it (control-flow lowering, out-of-SSA, register
allocation, parallel-copy lowering).

`opcodes` holds the machine-level rows of the opcode table, `text` the `func.LEVEL` text
form; each pass is one small module here. Nothing registers itself on import.
"""
