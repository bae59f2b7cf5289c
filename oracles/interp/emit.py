"""The interpreter's backend for the bit-vector interface: it emits numpy source code.

Running an opcode's semantics against `NumpyEmitter` does not compute anything; it writes
one line of straight-line Python per operation, over uint64 arrays that hold one lane
(thread x input set) per element. A block becomes one Python function, so the per-operation
cost at run time is a numpy call, not an interpretive dispatch.
"""

from __future__ import annotations

import re

from agxir.ir import Immediate, Instruction, Uniform, Value

# Text that makes an expression's value depend on more than its operands' names: storage
# (V, H, U), the per-run lane state and its effects (X), and the active-lane mask.
_IMPURE = re.compile(r"X\.|V\[|H\[|U\[|act")


def _mask(width: int) -> int:
    return (1 << width) - 1


class Const(str):
    """A value known while emitting: the text names its broadcast array, `value` holds it.
    Operations on constants only are folded instead of emitted."""

    value: int

    def __new__(cls, text: str, value: int):
        made = super().__new__(cls, text)
        made.value = value
        return made



class NumpyEmitter:
    """Implements `agxir.opcodes.bitvectors.BitVectors` by emitting code into `lines`."""

    def __init__(self):
        self.lines: list[str] = []
        self.local_of: dict[object, str] = {}
        self.computed: dict[str, str] = {}  # pure expression -> the local holding it
        self.constants: dict[int, str] = {}
        self.counter = 0
        self.instruction: Instruction | None = None

    # --- bookkeeping --------------------------------------------------------------------
    def temp(self, expression: str) -> str:
        """A local holding `expression`. An expression over a block's locals, constants and
        thread ids only is computed once per block: those never change within it, so the
        same text means the same value (semantics repeat operand checks, as float inputs'
        NaN tests). Anything reading storage, the lanes' state or the mask is emitted as is."""
        pure = _IMPURE.search(expression) is None
        if pure:
            name = self.computed.get(expression)
            if name is not None:
                return name
        self.counter += 1
        name = f"t{self.counter}"
        self.lines.append(f"{name} = {expression}")
        if pure:
            self.computed[expression] = name
        return name

    def local(self, ref: Value | Uniform) -> str:
        """A local holding `ref` for this block, reading V/U on first use."""
        name = self.local_of.get(ref)
        if name is None:
            table, prefix = ("V", "v") if isinstance(ref, Value) else ("U", "u")
            name = f"{prefix}_{ref.name}"
            self.lines.append(f"{name} = {table}[{ref.name!r}]")
            self.local_of[ref] = name
        return name

    def begin_block(self) -> None:
        """Start a block's code. Everything a block's text mentions is named by what it is
        (value and uniform names, constant values), so equal blocks give equal text."""
        self.lines = []
        self.local_of = {}
        self.computed = {}
        self.counter = 0

    def ref_value(self, operand_ref) -> str:
        if isinstance(operand_ref, Immediate):
            return self.const(operand_ref.bits, 16)
        return self.local(operand_ref)

    # --- operands and constants ---------------------------------------------------------------
    def operand(self, index: int) -> str:
        return self.local(self.instruction.srcs[index].ref)

    def const(self, value: int, width: int) -> str:
        name = self.constants.get(value)
        if name is None:
            name = Const(f"C[{value:#x}]", value)
            self.constants[value] = name
        return name

    def _fold(self, operands, compute, width: int):
        """The constant result when every operand is constant, else None."""
        if all(isinstance(x, Const) for x in operands):
            return self.const(compute(*(x.value for x in operands)) & _mask(width), width)
        return None

    def _binary(self, a, b, symbol: str, width: int, compute, wrap: bool = True):
        if isinstance(a, Const) and isinstance(b, Const):  # (`_fold`, without its generator)
            return self.const(compute(a.value, b.value) & _mask(width), width)
        expression = f"{a} {symbol} {b}"
        return self._wrap(expression, width) if wrap else self.temp(expression)

    # --- integers ---------------------------------------------------------------------------------
    def _wrap(self, expression: str, width: int) -> str:
        if width == 64:
            return self.temp(expression)
        # A broadcast array is about twice as fast as a wide Python int literal here.
        return self.temp(f"({expression}) & {self.const(_mask(width), width)}")

    def add(self, a, b, width):
        return self._binary(a, b, "+", width, lambda x, y: x + y)

    def sub(self, a, b, width):
        return self._binary(a, b, "-", width, lambda x, y: x - y)

    def mul(self, a, b, width):
        return self._binary(a, b, "*", width, lambda x, y: x * y)

    def and_(self, a, b, width):
        return self._binary(a, b, "&", width, lambda x, y: x & y, wrap=False)

    def or_(self, a, b, width):
        return self._binary(a, b, "|", width, lambda x, y: x | y, wrap=False)

    def xor(self, a, b, width):
        return self._binary(a, b, "^", width, lambda x, y: x ^ y, wrap=False)

    def not_(self, a, width):
        folded = self._fold((a,), lambda x: ~x, width)
        return folded if folded is not None else self.temp(f"{a} ^ {self.const(_mask(width), width)}")

    def shl(self, a, amount, width):
        folded = self._fold((a,), lambda x: x << amount, width)
        return folded if folded is not None else self._wrap(f"{a} << {amount}", width)

    def lshr(self, a, amount, width):
        folded = self._fold((a,), lambda x: x >> amount, width)
        return folded if folded is not None else self.temp(f"{a} >> {amount}")

    def shl_var(self, a, amount, width):
        return self._binary(a, amount, "<<", width, lambda x, y: x << y)

    def lshr_var(self, a, amount, width):
        return self._binary(a, amount, ">>", width, lambda x, y: x >> y, wrap=False)

    def ashr_var(self, a, amount, width):
        return self.temp(f"ashr({a}, {amount}, {width})")

    def zext(self, a, from_width, to_width):
        return a

    def sext(self, a, from_width, to_width):
        bit = 1 << (from_width - 1)
        folded = self._fold((a,), lambda x: (x ^ bit) - bit, to_width)
        if folded is not None:
            return folded
        sign = self.const(bit, to_width)
        return self._wrap(f"({a} ^ {sign}) - {sign}", to_width)

    def trunc(self, a, from_width, to_width):
        folded = self._fold((a,), lambda x: x, to_width)
        return folded if folded is not None else self.temp(f"{a} & {self.const(_mask(to_width), to_width)}")

    # --- predicates -----------------------------------------------------------------------------------
    def eq(self, a, b, width):
        return self.temp(f"{a} == {b}")

    def ult(self, a, b, width):
        return self.temp(f"{a} < {b}")

    def slt(self, a, b, width):
        sign = self.const(1 << (width - 1), width)
        return self.temp(f"({a} ^ {sign}) < ({b} ^ {sign})")

    def both(self, a, b):
        return self.temp(f"{a} & {b}")

    def either(self, a, b):
        return self.temp(f"{a} | {b}")

    def negate(self, a):
        return self.temp(f"~{a}")

    def select(self, cond, a, b, width):
        return self.temp(f"where({cond}, {a}, {b})")

    # --- floats (helpers live in oracles.interp.floats) ---------------------------------------------
    def fadd(self, a, b, fw):
        return self.temp(f"bits{fw}(f{fw}({a}) + f{fw}({b}))")

    def fmul(self, a, b, fw):
        return self.temp(f"bits{fw}(f{fw}({a}) * f{fw}({b}))")

    def ffma(self, a, b, c, fw):
        return self.temp(f"ffma({a}, {b}, {c}, {fw})")

    def fconvert(self, a, from_fw, to_fw):
        return self.temp(f"fconvert({a}, {from_fw}, {to_fw})")

    def int_to_float(self, a, width, fw, signed):
        return self.temp(f"int_to_float({a}, {width}, {fw}, {signed})")

    def float_to_int(self, a, fw, width, signed):
        return self.temp(f"float_to_int({a}, {fw}, {width}, {signed})")

    def fis_nan(self, a, fw):
        return self.temp(f"isnan(f{fw}({a}))")

    def feq(self, a, b, fw):
        return self.temp(f"f{fw}({a}) == f{fw}({b})")

    def flt(self, a, b, fw):
        return self.temp(f"f{fw}({a}) < f{fw}({b})")

    def fle(self, a, b, fw):
        return self.temp(f"f{fw}({a}) <= f{fw}({b})")

    # --- effects -------------------------------------------------------------------------------------
    def undefined_if(self, cond, reason):
        hit = self.temp(f"{cond} & act")
        self.lines.append(f"if {hit}.any(): X.undefined({hit}, {reason!r})")

    def load(self, address, nbytes):
        return self.temp(f"X.load({address}, {nbytes}, act)")

    def store(self, address, value, nbytes):
        self.lines.append(f"X.store({address}, {value}, {nbytes}, act)")

    def thread_id(self):
        return "TID"

    def export(self, slot, value, width):
        self.lines.append(f"X.export({slot}, {value}, act)")

    # --- the wave ------------------------------------------------------------------------------------
    def ballot(self, cond):
        return self.temp(f"X.ballot({cond}, act)")

