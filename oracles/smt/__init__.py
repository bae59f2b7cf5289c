"""The z3 oracle: opcode semantics as z3 terms, for proving things about instructions.

`encode_instruction(ins, operands, thread_id=..., memory=...)` runs an instruction's
semantics on `Z3BitVectors` and returns an `EncodedInstruction` (result, undefined-behaviour
condition and reasons, memory after, exports). `Memory` models device memory as a z3 byte
array plus buffer bounds; `function_memory` and `uniform_terms` lay out a function's buffers
and uniforms exactly as the interpreter does. `value_of` evaluates a closed term and `bitvec`
builds a constant, so callers need not import z3, which only this package may do.
"""

from oracles.smt.bitvectors import (
    CANONICAL_NAN,
    OUT_OF_BOUNDS,
    Memory,
    Z3BitVectors,
    bitvec,
    buffer_base,
    concrete_memory,
    float_sort,
    function_memory,
    uniform_terms,
    value_of,
)
from oracles.smt.instruction import EncodedInstruction, encode_instruction

__all__ = [
    "CANONICAL_NAN",
    "OUT_OF_BOUNDS",
    "EncodedInstruction",
    "Memory",
    "Z3BitVectors",
    "bitvec",
    "buffer_base",
    "concrete_memory",
    "encode_instruction",
    "float_sort",
    "function_memory",
    "uniform_terms",
    "value_of",
]
