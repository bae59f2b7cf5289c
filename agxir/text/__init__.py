"""The text form of the IR: `parse_function`, `print_function` and their helpers.

The grammar is in docs/grammar.md. `lexer` owns tokens and `ParseError`, `parser` turns
text into an `ir.Function`, `printer` writes the canonical text back, and `front` holds the
two front doors, which find the function's level in `agxir.levels` and call its hooks.
"""

from agxir.text.front import parse_function, print_function
from agxir.text.lexer import ParseError
from agxir.text.printer import format_instruction, format_operand

__all__ = ["ParseError", "format_instruction", "format_operand", "parse_function", "print_function"]
