"""What a pass is, and the small queries every pass shares.

A `Pass` is a name, a one-line summary and a function that rewrites an `ir.Function` in
place. The contract every pass keeps: `run(fn)` returns True iff it changed something, and
when it returns False it has not touched `fn` at all (not even reordering a list), so a
caller may skip re-verifying or re-printing an unchanged function. What else a pass declares
(the levels it takes and gives, its rule table, its promises, its place in the pipelines)
is its `Contract` (agxir.passes.contract), one line in agxir.passes.registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agxir.ir import Function, Immediate, Instruction, Operand, Value
from agxir.rewrite import slot_spec

# `#0` with no modifiers: what Mesa's agx_is_equiv(src, agx_zero()) accepts.
ZERO = Operand(Immediate(0))


@dataclass(frozen=True)
class Pass:
    name: str
    summary: str
    run: Callable[[Function], bool]


def definitions(fn: Function) -> dict[Value, Instruction]:
    """The defining instruction of every value.

    Built over the whole function rather than Mesa's "defs seen so far": in SSA every
    non-phi use is dominated by its definition, so the two agree on the uses passes inspect,
    and this one does not depend on block order.
    """
    return {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}


def instructions_backward(fn: Function) -> Iterator[Instruction]:
    """Blocks in reverse, instructions in reverse: the visiting order of Mesa's backward pass."""
    for block in reversed(fn.blocks):
        yield from reversed(block.instructions)


def compared_value(ins: Instruction, defs: dict[Value, Instruction]) -> Instruction | None:
    """The icmp/fcmp behind `ins` when `ins` tests `t == 0` on its result `t`.

    This is the guard shared by Mesa's cmpsel and if_cmp fusions: source 1 is exactly `#0`,
    the condition is `ueq`, and source 0 is an SSA value defined by a compare.
    """
    if ins.attrs.get("cond") != "ueq" or len(ins.srcs) < 2 or ins.srcs[1] != ZERO:
        return None
    t = ins.srcs[0]
    # Integer compare sources take no modifiers, so a modified `t` is ill-formed input;
    # declining keeps the rewrite from silently dropping a modifier.
    if not isinstance(t.ref, Value) or t.abs or t.neg:
        return None
    compare = defs.get(t.ref)
    if compare is None or compare.name not in ("icmp", "fcmp"):
        return None
    return compare


def may_read_instead(b, operand: str, definition: str) -> bool:
    """Whether the use site a focus rule matched (`b.root` at `b.position`) may read the
    bound `operand` in place of the result of the bound instruction `definition`: the slot
    is one the row describes (or a phi's), it accepts the operand's kind, and the operand
    is not that instruction's own result (which only happens in unreachable code, and
    following it would never end)."""
    replacement, defined, user = b[operand], b[definition], b.root
    if replacement.ref is defined.dest:
        return False
    spec = slot_spec(user, b.position)
    if spec is None:
        return user.is_phi
    return spec.uniform or not replacement.is_uniform


def use_abs(b) -> bool:
    """The `.abs` the rewritten use carried (focus rules bind it as "use")."""
    return b["use"].abs


def use_neg(b) -> bool:
    return b["use"].neg
