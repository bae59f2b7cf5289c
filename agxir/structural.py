"""Whether a pass's output certainly prints as its input, without printing it.

A pass runs on a clone of its input; when it reports no change, the caller (the harness's
no-change check) wants the output's text, and on long functions printing it was one of the
largest costs of a step. `prints_as` compares the clone with the original structurally
instead, and says True only when the texts are certainly the same; False means only
"print it to see". `same_body` is the per-block part, in pure Python: the reference that
the compiled core's `same_body` (agxir/ccore_src/compare.c, agxir.native) follows clause
for clause.
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Register, Uniform, Value, VirtualRegister
from agxir.native import CORE
from agxir.text import print_function


def prints_as(before: Function, before_text: str, after: Function) -> bool:
    """Whether `after`, a clone of `before` that a pass ran on, certainly prints as
    `before_text` (`before`'s text, printed before the pass ran). False means only "print it
    to see": anything this does not vouch for (a shared Value or Block that the pass may
    have changed in place, a uniform not the function's own, an unusual operand) is left to
    the texts. Structure it does compare: the header (printed: uniforms are shared with the
    clone), block names and logical successors, and per instruction the opcode, saturation,
    attributes with their types, destinations, sources with modifiers, and targets."""
    if len(before.blocks) != len(after.blocks) or len(before.uniforms) != len(after.uniforms):
        return False
    if any(x is not y for x, y in zip(before.uniforms, after.uniforms)):
        return False
    header = Function(after.name, after.uniforms, [], after.level, after.notes)
    if print_function(header).partition("\n")[0] != before_text.partition("\n")[0]:
        return False
    if CORE is not None:
        return CORE.same_body(before, after)
    return same_body(before, after)


def same_body(before: Function, after: Function) -> bool:
    """`prints_as` past the header, block by block (the reference: see the module)."""
    uniforms = {id(u) for u in after.uniforms}
    old_index = {id(b): k for k, b in enumerate(before.blocks)}
    new_index = {id(b): k for k, b in enumerate(after.blocks)}

    def same_blocks(xs, ys) -> bool:
        if len(xs) != len(ys):
            return False
        for x, y in zip(xs, ys):
            k = new_index.get(id(y))
            if k is None or old_index.get(id(x)) != k:
                return False
        return True

    for old, new in zip(before.blocks, after.blocks):
        if old.name != new.name or len(old.instructions) != len(new.instructions):
            return False
        if (old.logical_successors is None) != (new.logical_successors is None):
            return False
        if old.logical_successors is not None and not same_blocks(
                old.logical_successors, new.logical_successors):
            return False
        for x, y in zip(old.instructions, new.instructions):
            if x.opcode is not y.opcode or x.sat is not y.sat:
                return False
            x_attrs, y_attrs = x.attrs, y.attrs
            if x_attrs != y_attrs:
                return False
            for name, value in x_attrs.items():
                if type(value) is not type(y_attrs[name]):
                    return False
            x_dest, y_dest = x.dest, y.dest
            if type(x_dest) is Value:  # the common case, inline
                if (type(y_dest) is not Value or x_dest is y_dest or x_dest.name != y_dest.name
                        or x_dest.size != y_dest.size):
                    return False
            elif not same_storage(x_dest, y_dest):
                return False
            if x.dests or y.dests:
                if len(x.dests) != len(y.dests) or not all(
                        map(same_storage, x.dests, y.dests)):
                    return False
            if len(x.srcs) != len(y.srcs):
                return False
            for a, b in zip(x.srcs, y.srcs):
                if a.abs is not b.abs or a.neg is not b.neg:
                    return False
                ra, rb = a.ref, b.ref
                kind = type(rb)
                if kind is not type(ra):
                    return False
                if kind is Value:
                    if ra is rb or ra.name != rb.name or ra.size != rb.size:
                        return False
                elif kind is Immediate:
                    if ra.bits != rb.bits or type(ra.bits) is not type(rb.bits):
                        return False
                elif kind is Uniform:
                    if ra is not rb or id(rb) not in uniforms:
                        return False
                elif kind is Register or kind is VirtualRegister:
                    if ra != rb:
                        return False
                else:
                    return False
            if (x.blocks or y.blocks) and not same_blocks(x.blocks, y.blocks):
                return False
    return True


def same_storage(x, y) -> bool:
    """A destination `prints_as` vouches for: the same register, or a fresh Value of the
    same name and size."""
    kind = type(y)
    if kind is not type(x):
        return False
    if x is None:
        return True
    if kind is Value:
        return x is not y and x.name == y.name and x.size == y.size
    return (kind is Register or kind is VirtualRegister) and x == y
