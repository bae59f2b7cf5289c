"""Input sets for generated programs: thread counts, uniform values and buffer contents.

Scalars lean on edge values (0, 1, all ones, the sign bit, the largest signed value, small
positive and negative numbers, float specials and simple float bit patterns of the uniform's
width) and otherwise take random bits. Buffers are all zero, random bytes, small integers
or small float values (f32 or f16), which keeps float arithmetic on loaded data in its
interesting range. Programs from `generate_program` index every buffer in bounds for up to
`MAX_THREADS` threads whatever the contents, so these inputs never make a load go astray.
"""

from __future__ import annotations

import numpy as np

from agxir.ir import Function
from fuzz.generate.choices import ChoiceSource
from fuzz.generate.operations import MAX_THREADS
from oracles.inputs import InputSet

__all__ = ["generate_inputs", "scalar_value", "buffer_contents"]

_FLOATS = {
    16: (0x3C00, 0x3800, 0xBC00, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x7BFF, 0x4000),
    32: (0x3F800000, 0x3F000000, 0xBF800000, 0x80000000, 0x7F800000, 0xFF800000,
         0x7FC00000, 0x00000001, 0x7F7FFFFF, 0x40000000),
    64: (0x3FF0000000000000, 0x3FE0000000000000, 0x8000000000000000, 0x7FF0000000000000,
         0x7FF8000000000000, 0x100000000),
}  # fmt: skip


def scalar_value(source: ChoiceSource, size: int) -> int:
    """An edge-biased `size`-bit value; 0 on a 0 choice."""
    mask = (1 << size) - 1
    r = source.below(16)
    if r < 2:
        return r
    if r == 2:
        return mask
    if r == 3:
        return 1 << (size - 1)
    if r == 4:
        return mask >> 1
    if r == 5:
        return 2 + source.below(14)
    if r == 6:
        return mask - source.below(16)
    if r == 7:
        return 1 << source.below(size)
    if r < 10:
        table = _FLOATS[size]
        return table[source.below(len(table))]
    if r == 10:
        return source.below(256)
    return source.bits(size)


def buffer_contents(source: ChoiceSource, nbytes: int) -> bytes:
    """Zeros on a 0 choice; otherwise random bytes, small integers or small floats."""
    r = source.below(6)
    if r == 0:
        return bytes(nbytes)
    if r <= 2:
        return source.blob(nbytes)
    rng = np.random.default_rng(source.bits(32))
    if r == 3:
        words = rng.integers(0, 16, (nbytes + 3) // 4, dtype=np.uint32)
        return words.tobytes()[:nbytes]
    if r == 4:
        values = (rng.integers(-16, 17, (nbytes + 3) // 4) * 0.25).astype(np.float32)
        return values.tobytes()[:nbytes]
    values = (rng.integers(-16, 17, (nbytes + 1) // 2) * 0.5).astype(np.float16)
    return values.tobytes()[:nbytes]


def generate_inputs(
    fn: Function, source: ChoiceSource, *, threads: int = 32, sets: int = 8
) -> list[InputSet]:
    """`sets` input sets of `threads` threads each (at most `MAX_THREADS`)."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"generated programs support 1..{MAX_THREADS} threads, not {threads}")
    scalars = [u for u in fn.uniforms if not u.is_buffer]
    buffers = [u for u in fn.uniforms if u.is_buffer]
    result = []
    for _ in range(sets):
        values = {u.name: scalar_value(source, u.size) for u in scalars}
        contents = {u.name: buffer_contents(source, u.buffer_bytes) for u in buffers}
        result.append(InputSet(threads, values, contents))
    return result
