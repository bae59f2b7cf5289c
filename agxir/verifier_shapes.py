"""Instruction shapes the verifiers judge once per process: the key (`shape_key`) and the
set of shapes found valid (`ValidShapes`).

Generated programs and the passes' output repeat a few hundred instruction shapes, so the
SSA and machine verifiers judge an instruction's own rules (its row's operand counts,
destination, `.sat`, attributes, modifiers, immediates, widths and the row's check) once per
shape and process, and ask only what depends on the function (targets and uniforms that
belong to it, uses, layout, phis, reads) every time. A key holds everything those
instruction-local checks read and nothing they do not: a key that missed a read part would
let an invalid instruction pass (tests/agxir/test_verifier_shapes.py varies each part).
Only shapes judged valid are kept; an instruction with a problem is judged in full every
time, so its errors are spelled as before.
"""

from __future__ import annotations

from agxir.ir import Immediate, Instruction, Register, Uniform, Value, VirtualRegister
from agxir.opcodes.spec import Opcode

__all__ = ["ValidShapes", "in_function_sound", "shape_key"]

_SHAPE_LIMIT = 1 << 16  # shapes kept before a cache starts over (memory, not speed)


def shape_key(ins: Instruction) -> tuple | None:
    """Everything an instruction's local checks read of `ins`: its row, `.sat`, how many
    sources, attributes and targets it has and whether the first two targets are the same
    block, the destination and each source with its modifiers (an SSA value, virtual
    register or uniform by class and size; a register by class, half and size; an
    immediate by its bits and their type; anything else itself), and each attribute's name,
    value and the value's type (1, True and 1.0 are equal but not equally legal). Flat,
    of ints and classes, so that hashing it calls no dataclass `__hash__`: each part's
    class says how many entries follow, and the counts come first. None for a phi or a
    parallel copy, whose checks read the function's predecessors or compare destinations:
    judged every time."""
    if ins.dests:
        return None
    row = ins.opcode
    if row.name == "phi":
        return None
    srcs = ins.srcs
    attrs = ins.attrs
    blocks = ins.blocks
    same = len(blocks) > 1 and blocks[0] is blocks[1]
    dest = ins.dest
    kind = dest.__class__
    # (one list display per destination kind: faster than extending a common head)
    if kind is Value or kind is VirtualRegister or kind is Uniform:
        key = [id(row), ins.sat, len(srcs), len(attrs), len(blocks), same, kind, dest.size]
    elif kind is Register:
        key = [id(row), ins.sat, len(srcs), len(attrs), len(blocks), same, kind, dest.half,
               dest.size]
    else:  # None, or what a wrong pass put there
        key = [id(row), ins.sat, len(srcs), len(attrs), len(blocks), same, kind, dest]
    for src in srcs:
        ref = src.ref
        kind = ref.__class__
        if kind is Value or kind is Uniform or kind is VirtualRegister:
            key += (kind, ref.size, src.abs, src.neg)
        elif kind is Register:
            key += (kind, ref.half, ref.size, src.abs, src.neg)
        elif kind is Immediate:
            bits = ref.bits
            key += (kind, bits.__class__, bits, src.abs, src.neg)
        else:
            key += (kind, ref, src.abs, src.neg)
    if attrs:
        for name, value in attrs.items():
            key += (name, value.__class__, value)
    return tuple(key)


class ValidShapes(dict):
    """Shape -> row of the instructions found valid (holding the row keeps its id its own).
    Asked as `shapes.get(key) is row`, which raises TypeError for a key that does not hash
    (an attribute a wrong pass set to a list): such an instruction is judged in full."""

    def remember(self, key: tuple | None, row: Opcode) -> None:
        if key is None:
            return
        if len(self) >= _SHAPE_LIMIT:
            self.clear()
        try:
            self[key] = row
        except TypeError:
            pass


def in_function_sound(ins: Instruction, block, index: int, live: bool, block_set, uniform_set,
                      defs=None, dominates=None) -> bool:
    """Whether what an instruction of a valid shape asks of its function holds, asked
    without a word: its targets are the function's blocks, its uniforms declared and (when
    `defs` is given, at the SSA level) each value it reads defined and, in a reachable
    block, defined before it or in a block that dominates it. When not, the verifier asks
    again through the checks that word the errors."""
    for target in ins.blocks:
        if target not in block_set:
            return False
    for src in ins.srcs:
        ref = src.ref
        kind = ref.__class__
        if kind is Value:
            if defs is None:
                continue
            site = defs.get(ref)
            if site is None:
                return False
            if live:
                def_block = site[0]
                if def_block is block:
                    if site[1] >= index:
                        return False
                elif not dominates(def_block, block):
                    return False
        elif kind is Uniform:
            if ref not in uniform_set:
                return False
        elif isinstance(ref, Value | Uniform):
            return False  # (a subclass: left to the worded checks)
    return True
