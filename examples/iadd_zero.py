"""A complete small pass, the one docs/writing-a-pass.md walks through: `iadd x, #0` is x.

    %d:32 = iadd %x, #0 shift=0     ; every read of %d becomes a read of %x

Only when `%x` is an SSA value of the destination's size read without modifiers (a narrow
source would be extended, `.abs`/`.neg` change the value), the immediate is a plain `#0`
and the shift is 0. The `iadd` itself stays; `dce` removes it once nothing reads it.
Reads through a modifier (`%d.neg`) keep the modifier on the new value: same bits, same
meaning.

    agxfuzz run --pass examples/iadd_zero.py:iadd_zero --time 30
    agxfuzz run --pass examples/iadd_zero.py:wrong_iadd_zero --time 30   # takes any immediate for #0
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Operand, Value


def forwarded(ins) -> Value | None:
    """The value `ins` copies, when it is `iadd %x, #0 shift=0` with `%x` as wide as it."""
    if ins.name != "iadd" or ins.sat or ins.attrs.get("shift") != 0 or len(ins.srcs) != 2:
        return None
    x, zero = ins.srcs
    if zero != Operand(Immediate(0)) or not isinstance(x.ref, Value) or x.abs or x.neg:
        return None
    if not isinstance(ins.dest, Value) or x.ref.size != ins.dest.size:
        return None
    return x.ref


def iadd_zero(fn: Function, copies_of=forwarded) -> bool:
    copies = {}
    for ins in fn.instructions():
        source = copies_of(ins)
        if source is not None:
            copies[ins.dest] = source
    changed = False  # the contract: False means fn was not touched at all
    for ins in fn.instructions():
        for position, src in enumerate(ins.srcs):
            target = src.ref
            while target in copies:  # %b = iadd %a, #0; %c = iadd %b, #0: %c reads %a
                target = copies[target]
            if target is not src.ref:
                ins.srcs[position] = src.with_ref(target)
                changed = True
    return changed


def forwarded_any_immediate(ins) -> Value | None:
    """The planted bug: any immediate is taken for `#0` (`iadd %x, #1` is not %x)."""
    if ins.name != "iadd" or len(ins.srcs) != 2 or not ins.srcs[1].is_immediate:
        return None
    as_if_zero = [ins.srcs[0], Operand(Immediate(0))]
    return forwarded(ins.__class__(ins.opcode, ins.dest, as_if_zero, ins.attrs, sat=ins.sat))


def wrong_iadd_zero(fn: Function) -> bool:
    return iadd_zero(fn, copies_of=forwarded_any_immediate)
