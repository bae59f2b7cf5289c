"""agxir: the IR under test, modeled on Apple's AGX backend in Mesa.

The opcode table and its semantics (`agxir.opcodes`), the SSA IR (`agxir.ir`), its text form
(`agxir.text`), CFG and dominators (`agxir.cfg`), the verifier (`agxir.verifier`), liveness
(`agxir.liveness`) and the passes (`agxir.passes`); the levels' hooks (`agxir.levels`), the
structural no-change comparison (`agxir.structural`) and the compiled core that clones and
compares fast where it is built (`agxir.native`, from `agxir/ccore_src/`). It imports neither
`oracles` nor `fuzz`.
"""

from agxir.ir import (
    Block,
    Function,
    Immediate,
    Instruction,
    Operand,
    Uniform,
    Value,
    clone_function,
)
from agxir.opcodes import OPCODES, opcode
from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import VerificationFailed, check, verify

__all__ = [
    "Block", "Function", "Immediate", "Instruction", "Operand", "Uniform", "Value",
    "clone_function", "OPCODES", "opcode", "ParseError", "parse_function", "print_function",
    "VerificationFailed", "check", "verify",
]  # fmt: skip
