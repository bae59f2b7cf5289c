"""Choice streams: where every random decision of the generators comes from.

A builder never touches `random` or Hypothesis directly; it asks a `ChoiceSource` for small
integers. Two backings exist:

* `ChoiceSource.from_seed(seed)`: a seeded `random.Random`, fast, for campaigns and
  benchmarks;
* `ChoiceSource.from_bytes(data)`: reads the choices from a byte string, for Hypothesis. When
  the bytes run out every choice is 0, so Hypothesis shrinking the bytes towards shorter and
  all-zero shrinks the generated object towards the simplest one.

The contract every builder keeps: a choice of 0 means "the simplest option" (fewer blocks,
stop generating, the smallest constant, the first and simplest opcode). `boolean` is False on
0, so builders phrase booleans as "do the more complex thing?".
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

__all__ = ["ChoiceSource", "Weighted"]


class Weighted:
    """Items with integer weights, precomputed for repeated `ChoiceSource.pick` calls.
    Items of weight 0 are dropped; the first remaining item is the one a 0 choice picks."""

    __slots__ = ("items", "cumulative", "total")

    def __init__(self, pairs: Sequence[tuple[Any, int]]):
        self.items: list = []
        self.cumulative: list[int] = []
        total = 0
        for item, weight in pairs:
            if weight > 0:
                total += weight
                self.items.append(item)
                self.cumulative.append(total)
        self.total = total

    def __bool__(self) -> bool:
        return self.total > 0

    def __len__(self) -> int:
        return len(self.items)


class ChoiceSource:
    """A stream of integer choices. Subclasses implement `below`, `boolean`, `bits` and
    `bytes`; everything else is built on them."""

    __slots__ = ()

    @staticmethod
    def from_seed(seed: int) -> ChoiceSource:
        return _SeededSource(seed)

    @staticmethod
    def from_bytes(data: bytes) -> ChoiceSource:
        return _ByteSource(data)

    def below(self, n: int) -> int:
        """An integer in [0, n); 0 when n <= 1."""
        raise NotImplementedError

    def boolean(self, p: float = 0.5) -> bool:
        """True with probability about p; False on a 0 choice."""
        raise NotImplementedError

    def bits(self, k: int) -> int:
        """A k-bit unsigned integer (any k, 64 included)."""
        raise NotImplementedError

    def bytes(self, n: int) -> bytes:
        """n bytes of contents (zeros when a byte source runs out)."""
        raise NotImplementedError

    def blob(self, n: int) -> bytes:
        """n bytes of bulk contents (buffers): random from a seeded source; from a byte
        source, expanded from a 32-bit seed read from the stream (all zero when it is 0)."""
        seed = self.bits(32)
        return random.Random(seed).randbytes(n) if seed else bytes(n)

    def frame(self, n: int) -> ChoiceSource:
        """A source for one self-contained decision. A byte source hands over exactly its
        next n bytes (choices past them read 0), so how much one decision consumes never
        shifts the bytes of the next: zeroing a frame simplifies just that decision, which
        is what lets Hypothesis shrink one instruction at a time. A seeded source returns
        itself."""
        return self

    def choice(self, seq: Sequence):
        return seq[self.below(len(seq))]

    def weighted(self, weights: Sequence[int]) -> int:
        """An index into `weights`, with probability proportional to its weight; 0 picks the
        first index of non-zero weight."""
        total = sum(weights)
        if total <= 0:
            raise ValueError("weighted() needs a positive total weight")
        r = self.below(total)
        for index, weight in enumerate(weights):
            if r < weight:
                return index
            r -= weight
        raise AssertionError("unreachable")

    def pick(self, table: Weighted):
        """An item of a precomputed `Weighted` table."""
        return table.items[bisect_right(table.cumulative, self.below(table.total))]


class _SeededSource(ChoiceSource):
    __slots__ = ("rng", "_random")

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self._random = self.rng.random

    def below(self, n: int) -> int:
        if n <= 1:
            return 0
        if n < 1 << 50:
            return int(self._random() * n)
        return self.rng.randrange(n)

    def boolean(self, p: float = 0.5) -> bool:
        return self._random() < p

    def bits(self, k: int) -> int:
        return self.rng.getrandbits(k) if k > 0 else 0

    def bytes(self, n: int) -> bytes:
        return self.rng.randbytes(n)

    def blob(self, n: int) -> bytes:
        return self.rng.randbytes(n)

    def pick(self, table: Weighted):
        return table.items[bisect_right(table.cumulative, int(self._random() * table.total))]


class _ByteSource(ChoiceSource):
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes):
        self.data = bytes(data)
        self.pos = 0

    @property
    def exhausted(self) -> bool:
        return self.pos >= len(self.data)

    def _take(self, k: int) -> int:
        pos = self.pos
        self.pos = pos + k
        chunk = self.data[pos : pos + k]
        return int.from_bytes(chunk, "big") if chunk else 0

    def below(self, n: int) -> int:
        if n <= 1:
            return 0
        if n <= 256:
            return self._take(1) % n
        return self._take(((n - 1).bit_length() + 7) // 8) % n

    def boolean(self, p: float = 0.5) -> bool:
        threshold = max(1, min(256, round((1.0 - p) * 256)))
        return self._take(1) >= threshold

    def bits(self, k: int) -> int:
        if k <= 0:
            return 0
        return self._take((k + 7) // 8) & ((1 << k) - 1)

    def frame(self, n: int) -> ChoiceSource:
        pos = self.pos
        self.pos = pos + n
        return _ByteSource(self.data[pos : pos + n])

    def bytes(self, n: int) -> bytes:
        pos = self.pos
        self.pos = pos + n
        chunk = self.data[pos : pos + n]
        return chunk + bytes(n - len(chunk))
