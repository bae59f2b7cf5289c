"""A second z3 encoding of `BitVectors`: w-bit values as mathematical integers in [0, 2**w).

Bit-vector solving gives up on products of products (`amul(amul(a, #b), #c)`: nonlinear
32- and 64-bit multiplication), which nonlinear integer arithmetic decides at once. This
machine implements the arithmetic, extension, comparison and selection operations exactly,
with `% 2**w` where bits wrap, and bitwise operations only where an integer form is exact (a
low-bit mask, a constant shift). Anything else raises `NotImplementedError`, and the
instance keeps the bit-vector verdict. It is used only after the bit-vector query times out.
"""

from __future__ import annotations

import z3


def _power(width: int) -> int:
    return 1 << width


def _constant(term) -> int | None:
    simple = z3.simplify(term)
    return simple.as_long() if z3.is_int_value(simple) else None


class IntBitVectors:
    def variable(self, name: str, width: int):
        return z3.Int(name)

    def range_of(self, term, width: int):
        return z3.And(term >= 0, term < _power(width))

    def const(self, value: int, width: int):
        return z3.IntVal(value & (_power(width) - 1))

    def add(self, a, b, width):
        return (a + b) % _power(width)

    def sub(self, a, b, width):
        return (a - b) % _power(width)

    def mul(self, a, b, width):
        return (a * b) % _power(width)

    def and_(self, a, b, width):
        for value, other in ((_constant(b), a), (_constant(a), b)):
            if value is not None and value & (value + 1) == 0:  # a low-bit mask 2**k - 1
                return other % (value + 1)
        raise NotImplementedError("bitwise and of two variables has no integer form here")

    def or_(self, a, b, width):
        raise NotImplementedError("bitwise or has no integer form here")

    def xor(self, a, b, width):
        raise NotImplementedError("bitwise xor has no integer form here")

    def not_(self, a, width):
        return _power(width) - 1 - a

    def shl(self, a, amount, width):
        return (a * _power(amount)) % _power(width)

    def lshr(self, a, amount, width):
        return a / _power(amount)

    def _amount(self, amount) -> int:
        value = _constant(amount)
        if value is None:
            raise NotImplementedError("a variable shift has no integer form here")
        return value

    def shl_var(self, a, amount, width):
        return self.shl(a, self._amount(amount), width)

    def lshr_var(self, a, amount, width):
        return self.lshr(a, self._amount(amount), width)

    def ashr_var(self, a, amount, width):
        k = self._amount(amount)
        return self.sext(self.lshr(a, k, width), width - k, width) if k else a

    def zext(self, a, from_width, to_width):
        return a

    def sext(self, a, from_width, to_width):
        if from_width == to_width:
            return a
        return z3.If(a >= _power(from_width - 1), a + _power(to_width) - _power(from_width), a)

    def trunc(self, a, from_width, to_width):
        return a % _power(to_width)

    def eq(self, a, b, width):
        return a == b

    def ult(self, a, b, width):
        return a < b

    def slt(self, a, b, width):
        def signed(x):
            return z3.If(x >= _power(width - 1), x - _power(width), x)

        return signed(a) < signed(b)

    def both(self, a, b):
        return z3.And(a, b)

    def either(self, a, b):
        return z3.Or(a, b)

    def negate(self, a):
        return z3.Not(a)

    def select(self, cond, a, b, width):
        return z3.If(cond, a, b)

    def __getattr__(self, name: str):
        raise NotImplementedError(f"BitVectors.{name} has no integer form")
