"""How the verifier words what it finds: instructions, operands, block lists, the legal
values of an attribute, counts. The SSA verifier (agxir.ssa_verifier) uses it, and the
machine verifier (agxir.machine.verifier) through the checks it inherits from there.
`legal` sits beside `legal_values` because the check and its message must agree on what a
legal value is (a bool is not 1, and 1.0 is not in range(2))."""

from __future__ import annotations

from agxir.ir import Block, Immediate, Instruction, Uniform, Value
from agxir.opcodes.spec import Attr, Src


def describe(ins: Instruction) -> str:
    if isinstance(ins.dest, Value):
        return f"{ins.name} %{ins.dest.name}"
    return ins.name


def ref_name(ref: Value | Uniform | Immediate) -> str:
    if isinstance(ref, Value):
        return f"%{ref.name}"
    if isinstance(ref, Immediate):
        return f"#{ref.bits}"
    return ref.name


def block_list(blocks: list[Block]) -> str:
    return "[" + ", ".join(block.name for block in blocks) + "]"


def alternatives(items) -> str:
    items = [str(item) for item in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def widths(sizes) -> str:
    return alternatives(sizes) + " bits"


def legal_values(attr: Attr) -> str:
    values = attr.values
    # (len() of range(2**64), mov_imm's values, overflows: compare the ends instead)
    if isinstance(values, range) and values.stop - values.start > 8 * values.step:
        return f"{values.start}..{values.stop - 1}"
    return alternatives(values)


def legal(attr: Attr, value) -> bool:
    # bool is an int and `1.0 in range(2)` holds, so the type must match a listed value too.
    if isinstance(attr.values, range):
        return type(value) is int and value in attr.values
    return any(type(value) is type(legal) and value == legal for legal in attr.values)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def source_name(ins: Instruction, position: int, spec: Src | None) -> str:
    if spec is None:
        return f"source {position} of {ins.name}"
    return f"source {spec.name} of {ins.name}"
