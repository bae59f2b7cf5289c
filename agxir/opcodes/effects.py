"""Semantics of memory, special registers, outputs and terminators.

AGX address mode: address = base64 + (ext64(index32) << (log2(bytes(format)) + shift)),
the index sign-extended unless it carries `.abs`. The shift happens after extension, in 64
bits. A misaligned address is undefined behaviour here; the backend makes an access
outside every buffer undefined too.
"""

from __future__ import annotations

from agxir.ir import Uniform
from agxir.opcodes.operands import (
    inverted,
    read_float_compare,
    read_int,
    read_int_compare,
    read_raw,
)

FORMAT_BYTES = {"i8": 1, "i16": 2, "i32": 4}
FORMAT_SHIFT = {"i8": 0, "i16": 1, "i32": 2}
SPECIAL_REGISTERS = ("thread_id",)


def effective_address(m, ins, base_index: int, index_index: int):
    fmt = ins.attrs["fmt"]
    nbytes = FORMAT_BYTES[fmt]
    base = read_raw(m, ins, base_index)
    index = read_int(m, ins, index_index, 64)
    shift = FORMAT_SHIFT[fmt] + ins.attrs["shift"]
    if shift:
        index = m.shl(index, shift, 64)
    address = m.add(base, index, 64)
    # The index part is a multiple of the element size, so the address is aligned exactly
    # when the base is; buffer uniforms are placed aligned, so only computed bases can fail.
    base_is_buffer = isinstance(ins.srcs[base_index].ref, Uniform) and ins.srcs[base_index].ref.is_buffer
    if nbytes > 1 and not base_is_buffer:
        low_bits = m.and_(address, m.const(nbytes - 1, 64), 64)
        m.undefined_if(m.negate(m.eq(low_bits, m.const(0, 64), 64)), "misaligned access")
    return address, nbytes


def device_load(m, ins):
    address, nbytes = effective_address(m, ins, 0, 1)
    loaded = m.load(address, nbytes)
    width = ins.dest.size
    return loaded if width == 8 * nbytes else m.zext(loaded, 8 * nbytes, width)


def device_store(m, ins):
    address, nbytes = effective_address(m, ins, 1, 2)
    size = ins.srcs[0].size
    value = read_raw(m, ins, 0, size)
    if size > 8 * nbytes:
        value = m.trunc(value, size, 8 * nbytes)
    m.store(address, value, nbytes)


def get_sr(m, ins):
    tid = m.thread_id()
    return tid if ins.dest.size == 32 else m.trunc(tid, 32, ins.dest.size)


def export(m, ins):
    size = ins.srcs[0].size
    m.export(ins.attrs["slot"], read_raw(m, ins, 0, size), size)


def if_icmp(m, ins):
    """Branch condition: cond(a, b) XOR inv; true goes to the first target."""
    truth, _ = read_int_compare(m, ins, ins.attrs["cond"])
    return inverted(m, truth, ins.attrs["inv"])


def if_fcmp(m, ins):
    return inverted(m, read_float_compare(m, ins, ins.attrs["cond"]), ins.attrs["inv"])


def no_value(m, ins):
    """jump and stop compute nothing; phi is resolved by the backend on block entry."""
    return None
