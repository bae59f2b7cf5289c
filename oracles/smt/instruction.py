"""Encoding one instruction as z3 terms by running its row's semantics on `Z3BitVectors`.

This module owns `encode_instruction` and its result, `EncodedInstruction`: the
destination's term (a `BoolRef` for the branch condition of if_icmp/if_fcmp, None for
instructions without a value), the undefined-behaviour condition of the thread (the OR of
every condition the semantics and the memory model raise, with the reasons in the order
they are raised), memory after the instruction, the exports it makes and, for a ballot, the
thread's condition (the mask itself is uninterpreted: see `Z3BitVectors.ballot`). Phis are not
instructions in this sense (their value is the incoming edge's); they are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import z3

from agxir.ir import Instruction, Uniform, Value
from oracles.smt.bitvectors import Memory, Z3BitVectors


@dataclass(frozen=True)
class EncodedInstruction:
    """What one instruction does in one thread, as z3 terms.

    `result`: the destination's bits (`BitVecRef` of the destination's size), the branch
    condition (`BoolRef`, true goes to the first target) or None. `undefined`: OR of all the
    `reasons` conditions. `memory_after`: memory once the instruction's stores happened (the
    same object when it stores nothing). `exports`: slot -> exported bits.
    """

    result: z3.ExprRef | None
    undefined: z3.BoolRef
    reasons: tuple[tuple[str, z3.BoolRef], ...] = ()
    memory_after: Memory | None = None
    exports: dict[int, z3.BitVecRef] = field(default_factory=dict)
    ballots: tuple[z3.BoolRef, ...] = ()  # each ballot's condition in this thread


def encode_instruction(
    ins: Instruction,
    operands: Mapping[Value | Uniform, z3.BitVecRef],
    thread_id: z3.BitVecRef | int | None = None,
    memory: Memory | None = None,
) -> EncodedInstruction:
    """Run `ins`'s semantics on z3 terms.

    `operands` maps every value and uniform `ins` reads to a term of its size (immediates
    need none). `thread_id` is a 32-bit term or int (default: a fresh constant named
    "thread_id"); `memory` defaults to a fresh array with no buffers, so every access is
    undefined. The instruction is assumed valid (see `agxir.verifier`).
    """
    if ins.is_phi:
        raise ValueError("a phi has no semantics of its own; take the incoming value")
    machine = Z3BitVectors(operands, thread_id, memory)
    machine.instruction = ins
    result = ins.opcode.semantics(machine, ins)
    if result is not None and ins.dest is not None and isinstance(result, z3.BitVecRef):
        if result.size() != ins.dest.size:
            raise AssertionError(
                f"{ins.name} produced {result.size()} bits for a {ins.dest.size}-bit destination"
            )
    return EncodedInstruction(
        result=result,
        undefined=machine.undefined(),
        reasons=tuple(machine.reasons),
        memory_after=machine.memory,
        exports=dict(machine.exports),
        ballots=tuple(machine.ballots),
    )
