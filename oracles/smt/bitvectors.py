"""z3's implementation of the bit-vector interface (`agxir.opcodes.bitvectors.BitVectors`).

This module owns the meaning of every `BitVectors` operation as a z3 term: integers are
`BitVecRef`s of their width, truth values are `BoolRef`s, floats are raw IEEE bits that are
turned into z3 floating point (`Float16`/`Float32`), computed with round-to-nearest-even
(subnormals kept) and turned back into bits with every NaN replaced by the canonical quiet
NaN (0x7e00 / 0x7fc00000). It also owns the z3 model of device memory (`Memory`): a byte
array indexed by 64-bit addresses plus the list of buffers an access must fall inside.

The machine is the twin of the interpreter's `oracles.interp.emit.NumpyEmitter`; anything
the two disagree on is a bug in one of them (see tests/oracles/smt/test_agreement.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import z3

from agxir.ir import Function, Immediate, Instruction, Uniform, Value
from oracles.memory_model import OUT_OF_BOUNDS, buffer_base

CANONICAL_NAN = {16: 0x7E00, 32: 0x7FC00000}

ADDRESS_SORT = z3.BitVecSort(64)
BYTE_SORT = z3.BitVecSort(8)


def float_sort(fwidth: int) -> z3.FPSortRef:
    if fwidth == 16:
        return z3.Float16()
    if fwidth == 32:
        return z3.Float32()
    raise ValueError(f"no {fwidth}-bit float format")


def _mask(width: int) -> int:
    return (1 << width) - 1


# --- memory -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """Device memory: `array` maps each 64-bit address to a byte; `buffers` lists the
    (base address, size in bytes) of every buffer. Bases may be z3 terms or ints; an access
    is defined only when it lies entirely inside one buffer."""

    array: z3.ArrayRef
    buffers: tuple[tuple[z3.BitVecRef | int, int], ...] = ()

    def with_array(self, array: z3.ArrayRef) -> Memory:
        return Memory(array, self.buffers)

    def inside(self, address: z3.BitVecRef, nbytes: int) -> z3.BoolRef:
        """True when [address, address + nbytes) lies inside some buffer, computed in 65 bits
        so that no sum wraps around."""
        wide = z3.ZeroExt(1, address)
        end = wide + z3.BitVecVal(nbytes, 65)
        cases = [z3.And(z3.ULE(start, wide), z3.ULE(end, stop))
                 for start, stop in _bounds(self.buffers, nbytes)]
        return z3.Or(*cases) if cases else z3.BoolVal(False)

    def load(self, address: z3.BitVecRef, nbytes: int) -> z3.BitVecRef:
        """Little-endian: the byte at `address` is the least significant."""
        parts = [z3.Select(self.array, address + i) for i in range(nbytes)]
        return parts[0] if nbytes == 1 else z3.Concat(*reversed(parts))

    def store(self, address: z3.BitVecRef, value: z3.BitVecRef, nbytes: int) -> Memory:
        array = self.array
        for i in range(nbytes):
            array = z3.Store(array, address + i, z3.Extract(8 * i + 7, 8 * i, value))
        return self.with_array(array)

    def buffer_bytes(self, number: int) -> list[z3.BitVecRef]:
        """The bytes of buffer `number`, in address order."""
        base, size = self.buffers[number]
        base = _as_address(base)
        return [z3.Select(self.array, base + i) for i in range(size)]


# (buffers, nbytes) -> each buffer's 65-bit start and end terms. z3 hash-conses terms, so
# these are the very terms building them afresh gives (for int bases); an encoding asks for the same few
# layouts at every access, and building them was a third of an access's cost.
_BOUNDS: dict[tuple, list[tuple[z3.BitVecRef, z3.BitVecRef]]] = {}


def _bounds(buffers, nbytes: int) -> list[tuple[z3.BitVecRef, z3.BitVecRef]]:
    key = (buffers, nbytes)
    cached = all(type(base) is int for base, _ in buffers)  # a term base: built afresh
    found = _BOUNDS.get(key) if cached else None
    if found is None:
        found = []
        for base, size in buffers:
            if size < nbytes:
                continue
            base65 = z3.ZeroExt(1, _as_address(base))
            found.append((base65, base65 + size))
        if cached:
            if len(_BOUNDS) >= 256:
                _BOUNDS.clear()
            _BOUNDS[key] = found
    return found


def _as_address(base: z3.BitVecRef | int) -> z3.BitVecRef:
    return z3.BitVecVal(base, 64) if isinstance(base, int) else base


def concrete_memory(
    buffers: list[tuple[int, int]] | tuple[tuple[int, int], ...],
    contents: list[bytes] | tuple[bytes, ...] = (),
) -> Memory:
    """Memory with the given (base, size) buffers, buffer k holding `contents[k]` (missing
    bytes, and every address outside the buffers, are zero)."""
    array = z3.K(ADDRESS_SORT, z3.BitVecVal(0, 8))
    for (base, _), data in zip(buffers, contents, strict=False):
        for i, byte in enumerate(data):
            if byte:
                array = z3.Store(array, z3.BitVecVal(base + i, 64), z3.BitVecVal(byte, 8))
    return Memory(array, tuple(buffers))


def function_memory(
    fn: Function, contents: Mapping[str, bytes] | None = None, name: str = "memory"
) -> Memory:
    """The memory `fn` runs against: its buffer uniforms at the interpreter's addresses.

    With `contents` (buffer name -> bytes; missing buffers and bytes are zero) the array is
    concrete; without it the array is a fresh z3 constant named `name`.
    """
    buffers = [u for u in fn.uniforms if u.is_buffer]
    layout = tuple((buffer_base(k), u.buffer_bytes) for k, u in enumerate(buffers))
    if contents is None:
        return Memory(z3.Array(name, ADDRESS_SORT, BYTE_SORT), layout)
    return concrete_memory(layout, [contents.get(u.name, b"") for u in buffers])


def uniform_terms(
    fn: Function, scalars: Mapping[str, int] | None = None, prefix: str = ""
) -> dict[Uniform, z3.BitVecRef]:
    """A term per uniform: buffer uniforms are their (constant) base addresses. Scalar ones are
    fresh z3 constants named `prefix + name`, or, given `scalars` (an InputSet's), its values,
    0 where it has none, as in the interpreter."""
    terms: dict[Uniform, z3.BitVecRef] = {}
    buffer_number = 0
    for uniform in fn.uniforms:
        if uniform.is_buffer:
            terms[uniform] = z3.BitVecVal(buffer_base(buffer_number), 64)
            buffer_number += 1
        elif scalars is not None:
            terms[uniform] = z3.BitVecVal(scalars.get(uniform.name, 0), uniform.size)
        else:
            terms[uniform] = z3.BitVec(prefix + uniform.name, uniform.size)
    return terms


# --- the machine ----------------------------------------------------------------------------------


BALLOT = z3.Function("ballot", z3.BoolSort(), z3.BitVecSort(32))


class Z3BitVectors:
    """Implements `agxir.opcodes.bitvectors.BitVectors` over z3 terms for one thread.

    `values` maps each SSA value and uniform an instruction may read to its term; set
    `instruction` before running an opcode's semantics. Undefined-behaviour conditions are
    collected in `reasons` (in the order the semantics raise them), stores thread `memory`
    through, exports land in `exports` (slot -> term).
    """

    def __init__(
        self,
        values: Mapping[Value | Uniform, z3.BitVecRef],
        thread_id: z3.BitVecRef | int | None = None,
        memory: Memory | None = None,
    ):
        self.values = values
        if thread_id is None:
            thread_id = z3.BitVec("thread_id", 32)
        elif isinstance(thread_id, int):
            thread_id = z3.BitVecVal(thread_id, 32)
        self.tid = thread_id
        self.memory = (
            memory if memory is not None else Memory(z3.Array("memory", ADDRESS_SORT, BYTE_SORT))
        )
        self.instruction: Instruction | None = None
        self.reasons: list[tuple[str, z3.BoolRef]] = []
        self.exports: dict[int, z3.BitVecRef] = {}
        self.ballots: list[z3.BoolRef] = []  # each ballot's condition in this thread

    # --- operands and constants ---------------------------------------------------------------
    def operand(self, index: int) -> z3.BitVecRef:
        src = self.instruction.srcs[index]
        if isinstance(src.ref, Immediate):
            raise ValueError("the semantics read immediates themselves")
        try:
            term = self.values[src.ref]
        except KeyError:
            raise KeyError(f"no term for source {index} ({src.ref!r})") from None
        if term.size() != src.ref.size:
            raise ValueError(f"term for {src.ref!r} is {term.size()}-bit")
        return term

    def const(self, value: int, width: int) -> z3.BitVecRef:
        return z3.BitVecVal(value & _mask(width), width)

    # --- integers ---------------------------------------------------------------------------------
    def add(self, a, b, width):
        return a + b

    def sub(self, a, b, width):
        return a - b

    def mul(self, a, b, width):
        return a * b

    def and_(self, a, b, width):
        return a & b

    def or_(self, a, b, width):
        return a | b

    def xor(self, a, b, width):
        return a ^ b

    def not_(self, a, width):
        return ~a

    def shl(self, a, amount, width):
        return a << amount

    def lshr(self, a, amount, width):
        return z3.LShR(a, amount)

    def shl_var(self, a, amount, width):
        return a << amount

    def lshr_var(self, a, amount, width):
        return z3.LShR(a, amount)

    def ashr_var(self, a, amount, width):
        return a >> amount

    def zext(self, a, from_width, to_width):
        return a if to_width == from_width else z3.ZeroExt(to_width - from_width, a)

    def sext(self, a, from_width, to_width):
        return a if to_width == from_width else z3.SignExt(to_width - from_width, a)

    def trunc(self, a, from_width, to_width):
        return a if to_width == from_width else z3.Extract(to_width - 1, 0, a)

    # --- predicates and selection ---------------------------------------------------------------------
    def eq(self, a, b, width):
        return a == b

    def ult(self, a, b, width):
        return z3.ULT(a, b)

    def slt(self, a, b, width):
        return a < b

    def both(self, a, b):
        return z3.And(a, b)

    def either(self, a, b):
        return z3.Or(a, b)

    def negate(self, a):
        return z3.Not(a)

    def select(self, cond, a, b, width):
        # If(c, a, If(c, a, y)) is If(c, a, y): a float read of a register that holds a float
        # read (a NaN made canonical twice) stays the same term, so proofs that compare the
        # two need no floating-point reasoning.
        if z3.is_app_of(b, z3.Z3_OP_ITE) and b.arg(0).eq(cond) and b.arg(1).eq(a):
            return b
        return z3.If(cond, a, b)

    # --- IEEE floats on raw bits ------------------------------------------------------------------------
    @staticmethod
    def _float(bits, fwidth):
        return z3.fpBVToFP(bits, float_sort(fwidth))

    @staticmethod
    def _bits(value, fwidth):
        nan = z3.BitVecVal(CANONICAL_NAN[fwidth], fwidth)
        return z3.If(z3.fpIsNaN(value), nan, z3.fpToIEEEBV(value))

    def fadd(self, a, b, fwidth):
        f = self._float
        return self._bits(z3.fpAdd(z3.RNE(), f(a, fwidth), f(b, fwidth)), fwidth)

    def fmul(self, a, b, fwidth):
        f = self._float
        return self._bits(z3.fpMul(z3.RNE(), f(a, fwidth), f(b, fwidth)), fwidth)

    def ffma(self, a, b, c, fwidth):
        f = self._float
        result = z3.fpFMA(z3.RNE(), f(a, fwidth), f(b, fwidth), f(c, fwidth))
        return self._bits(result, fwidth)

    def fconvert(self, a, from_fwidth, to_fwidth):
        converted = z3.fpToFP(z3.RNE(), self._float(a, from_fwidth), float_sort(to_fwidth))
        return self._bits(converted, to_fwidth)

    def int_to_float(self, a, width, fwidth, signed):
        convert = z3.fpSignedToFP if signed else z3.fpUnsignedToFP
        return self._bits(convert(z3.RNE(), a, float_sort(fwidth)), fwidth)

    def float_to_int(self, a, fwidth, width, signed):
        """Round toward zero. Outside the integer range (and for NaN) z3 leaves the result
        unspecified; the semantics only consult it in range."""
        convert = z3.fpToSBV if signed else z3.fpToUBV
        return convert(z3.RTZ(), self._float(a, fwidth), z3.BitVecSort(width))

    def fis_nan(self, a, fwidth):
        # A NaN made canonical, If(isnan(y), NaN, y), is a NaN exactly when y is.
        if (
            z3.is_app_of(a, z3.Z3_OP_ITE)
            and z3.is_bv_value(a.arg(1))
            and a.arg(1).as_long() == CANONICAL_NAN[fwidth]
            and a.arg(0).eq(self.fis_nan(a.arg(2), fwidth))
        ):
            return a.arg(0)
        return z3.fpIsNaN(self._float(a, fwidth))

    def feq(self, a, b, fwidth):
        return z3.fpEQ(self._float(a, fwidth), self._float(b, fwidth))

    def flt(self, a, b, fwidth):
        return z3.fpLT(self._float(a, fwidth), self._float(b, fwidth))

    def fle(self, a, b, fwidth):
        return z3.fpLEQ(self._float(a, fwidth), self._float(b, fwidth))

    # --- effects -------------------------------------------------------------------------------------------
    def undefined_if(self, cond, reason):
        self.reasons.append((reason, cond))

    def load(self, address, nbytes):
        self.undefined_if(z3.Not(self.memory.inside(address, nbytes)), OUT_OF_BOUNDS)
        return self.memory.load(address, nbytes)

    def store(self, address, value, nbytes):
        self.undefined_if(z3.Not(self.memory.inside(address, nbytes)), OUT_OF_BOUNDS)
        self.memory = self.memory.store(address, value, nbytes)

    def thread_id(self):
        return self.tid

    def export(self, slot, value, width):
        self.exports[slot] = value

    # --- the wave ----------------------------------------------------------------------------------------
    def ballot(self, cond):
        """One thread cannot see its wave: the mask is an uninterpreted function of this
        thread's condition, shared by every ballot opcode and every function encoded. A
        query comparing two ballots is valid for every interpretation exactly when the two
        conditions agree in every thread, which is what makes the masks equal in every wave
        (a counterexample picks an interpretation, so it is only a candidate). Divergence
        is not encoded: the interpreter judges where a ballot may run."""
        self.ballots.append(cond)
        return BALLOT(cond)

    # --- summary ----------------------------------------------------------------------------------------------
    def undefined(self) -> z3.BoolRef:
        """OR of every undefined-behaviour condition raised so far."""
        return z3.Or(*[cond for _, cond in self.reasons]) if self.reasons else z3.BoolVal(False)


# --- concrete evaluation ------------------------------------------------------------------------


def bitvec(value: int, width: int) -> z3.BitVecRef:
    """A constant term, so callers need not import z3."""
    return z3.BitVecVal(value & _mask(width), width)


def value_of(term: z3.ExprRef) -> int | bool:
    """The value of a closed term (no free constants): an int for a bit-vector, a bool for a
    Bool. Parts z3 leaves unspecified (fp.to_sbv of NaN, ...) take whatever value a model
    gives them, so callers should only rely on terms the semantics define."""
    simple = z3.simplify(term)
    if z3.is_bv_value(simple):
        return simple.as_long()
    if z3.is_true(simple):
        return True
    if z3.is_false(simple):
        return False
    free = _free_constants(simple)
    if free:
        raise ValueError(f"term is not closed: it depends on {', '.join(sorted(free))}")
    solver = z3.Solver()
    solver.check()
    evaluated = solver.model().eval(simple, model_completion=True)
    if z3.is_bv_value(evaluated):
        return evaluated.as_long()
    if z3.is_true(evaluated) or z3.is_false(evaluated):
        return z3.is_true(evaluated)
    raise ValueError(f"cannot evaluate {simple}")


def _free_constants(term: z3.ExprRef) -> set[str]:
    seen, free, stack = set(), set(), [term]
    while stack:
        node = stack.pop()
        if node.get_id() in seen:
            continue
        seen.add(node.get_id())
        if z3.is_const(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            free.add(str(node))
        stack.extend(node.children())
    return free
