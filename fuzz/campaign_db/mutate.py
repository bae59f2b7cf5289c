"""Mutations of a choice sequence, Hypothesis-style: each works on the bytes a program was
built from, so every mutant is a byte string, and every byte string is a valid program
(`ChoiceSource.from_bytes` reads 0 past the end, and the generator builds a verified,
terminating program from any choices). A mutant shrinks as any program does.

Operators (`OPERATORS`), each returning the new bytes and a short description:

* `zero`: zero a span (often a whole frame: an instruction left out, a simpler decision);
* `copy`: copy a span of another corpus entry over a span of this one (at the same offset
  half the time, where the two streams most likely mean the same decisions);
* `randomize`: random bytes over a span (possibly past the end: the program grows);
* `duplicate`: insert a copy of a frame and the byte before it (in a block's instruction loop
  that byte is the "one more?" choice: an instruction repeated);
* `shrink`: one byte made smaller (a smaller constant, an earlier opcode or operand).

`mutate` stacks one to four of them. Frames are the (offset, n) spans the builders opened
(`ChoiceSource.from_bytes(data, frames)` collects them); spans are aligned to a frame half
the time.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["OPERATORS", "mutate"]

MAX_SPAN = 64


def _span(data: bytes, rng: random.Random, frames: Sequence[tuple[int, int]],
          *, past_end: int = 0) -> tuple[int, int]:
    """(start, length) of a span inside `data` (or up to `past_end` bytes beyond it)."""
    if frames and rng.random() < 0.5:
        start, n = frames[rng.randrange(len(frames))]
        return start, n
    limit = len(data) + past_end
    if limit <= 0:
        return 0, 1 + rng.randrange(8)
    start = rng.randrange(limit)
    return start, 1 + rng.randrange(min(MAX_SPAN, max(1, limit - start)))


def _put(data: bytes, start: int, chunk: bytes) -> bytes:
    """`data` with `chunk` written at `start` (zero-filled first if `start` is past the end)."""
    if start > len(data):
        data = data + bytes(start - len(data))
    return data[:start] + chunk + data[start + len(chunk):]


def zero(data, rng, frames, donors):
    start, length = _span(data, rng, frames)
    return _put(data, start, bytes(min(length, max(0, len(data) - start)))), f"zero {start}+{length}"


def copy(data, rng, frames, donors):
    donor = donors[rng.randrange(len(donors))] if donors else data
    if not donor:
        return randomize(data, rng, frames, donors)
    at = rng.randrange(len(donor))
    length = 1 + rng.randrange(min(MAX_SPAN, len(donor) - at))
    to = at if rng.random() < 0.5 else rng.randrange(len(data) + 1)
    return _put(data, to, donor[at:at + length]), f"copy {at}+{length} to {to}"


def randomize(data, rng, frames, donors):
    start, length = _span(data, rng, frames, past_end=16)
    return _put(data, start, rng.randbytes(length)), f"randomize {start}+{length}"


def duplicate(data, rng, frames, donors):
    inside = [(s, n) for s, n in frames if s + n <= len(data)]
    if not inside:
        return randomize(data, rng, frames, donors)
    start, n = inside[rng.randrange(len(inside))]
    first = max(0, start - 1)
    piece = data[first:start + n]
    return data[:start + n] + piece + data[start + n:], f"duplicate frame {start}+{n}"


def shrink(data, rng, frames, donors):
    nonzero = [i for i, byte in enumerate(data) if byte]
    if not nonzero:
        return zero(data, rng, frames, donors)
    i = nonzero[rng.randrange(len(nonzero))]
    smaller = data[i] >> 1 if rng.random() < 0.5 else rng.randrange(data[i])
    return data[:i] + bytes((smaller,)) + data[i + 1:], f"shrink {i}"


OPERATORS = {"zero": zero, "copy": copy, "randomize": randomize, "duplicate": duplicate,
             "shrink": shrink}


def mutate(data: bytes, rng: random.Random, *, frames: Sequence[tuple[int, int]] = (),
           donors: Sequence[bytes] = (), steps: int | None = None) -> tuple[bytes, list[str]]:
    """`data` under one to four stacked mutations (or `steps`): the mutant and what was
    done. Frames are `data`'s; after an operator that moves bytes they may be off, which
    only makes a later aligned span less aligned."""
    names = list(OPERATORS)
    done = []
    for _ in range(steps if steps is not None else 1 << rng.randrange(3)):
        name = names[rng.randrange(len(names))]
        data, description = OPERATORS[name](data, rng, frames, donors)
        done.append(description)
    return data, done
