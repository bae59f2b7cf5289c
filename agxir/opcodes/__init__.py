"""The opcode table and the semantics written against one bit-vector interface."""

from agxir.opcodes.spec import Attr, Opcode, Src
from agxir.opcodes.table import BITOP_ALIASES, OPCODES, ROWS, UNARY_BITOP_ALIASES, opcode

__all__ = ["Attr", "Opcode", "Src", "OPCODES", "ROWS", "BITOP_ALIASES", "UNARY_BITOP_ALIASES", "opcode"]
