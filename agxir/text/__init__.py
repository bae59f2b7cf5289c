"""The text form of the IR: `parse_function`, `print_function` and their helpers.

The grammar is in docs/grammar.md. `lexer` owns tokens and `ParseError`, `parser` turns
text into an `ir.Function`, `printer` writes the canonical text back.
"""

from agxir.text.lexer import ParseError
from agxir.text.parser import parse_function
from agxir.text.printer import format_instruction, format_operand, print_function

__all__ = ["ParseError", "format_instruction", "format_operand", "parse_function", "print_function"]
