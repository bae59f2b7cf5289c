"""The bit-vector `BitVectors` on plain Python ints, for evaluating a rule's computed parts.

A rule's computed immediates and value preconditions are written once against
`agxir.opcodes.bitvectors.BitVectors`. When a pass rewrites a program they run here, on the
concrete 16-bit immediates of the match; when the audit proves the rule they run on z3 terms.
Integers are unsigned and masked to their width; truth values are Python bools. Only the
integer and truth-value part is implemented: rules compute integer immediates, and reading
operands, memory or floats is the semantics' business, not a rule's.
"""

from __future__ import annotations


def _mask(width: int) -> int:
    return (1 << width) - 1


def _signed(value: int, width: int) -> int:
    value &= _mask(width)
    return value - (1 << width) if value >> (width - 1) else value


class ConcreteBitVectors:
    """Implements the integer and Bool operations of `BitVectors` on Python ints."""

    def const(self, value: int, width: int) -> int:
        return value & _mask(width)

    def add(self, a, b, width):
        return (a + b) & _mask(width)

    def sub(self, a, b, width):
        return (a - b) & _mask(width)

    def mul(self, a, b, width):
        return (a * b) & _mask(width)

    def and_(self, a, b, width):
        return a & b

    def or_(self, a, b, width):
        return a | b

    def xor(self, a, b, width):
        return a ^ b

    def not_(self, a, width):
        return ~a & _mask(width)

    def shl(self, a, amount, width):
        return (a << amount) & _mask(width)

    def lshr(self, a, amount, width):
        return a >> amount

    def shl_var(self, a, amount, width):
        return (a << amount) & _mask(width)

    def lshr_var(self, a, amount, width):
        return a >> amount

    def ashr_var(self, a, amount, width):
        return (_signed(a, width) >> amount) & _mask(width)

    def zext(self, a, from_width, to_width):
        return a & _mask(from_width)

    def sext(self, a, from_width, to_width):
        return _signed(a, from_width) & _mask(to_width)

    def trunc(self, a, from_width, to_width):
        return a & _mask(to_width)

    def eq(self, a, b, width):
        return a == b

    def ult(self, a, b, width):
        return a < b

    def slt(self, a, b, width):
        return _signed(a, width) < _signed(b, width)

    def both(self, a, b):
        return bool(a and b)

    def either(self, a, b):
        return bool(a or b)

    def negate(self, a):
        return not a

    def select(self, cond, a, b, width):
        return a if cond else b

    def __getattr__(self, name: str):
        # Floats, memory and operands have no place in a rule's computed parts.
        raise NotImplementedError(f"rules compute on integers; BitVectors.{name} is not available")


CONCRETE = ConcreteBitVectors()
