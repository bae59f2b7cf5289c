"""Choice streams: where every random decision of the generators comes from.

A builder never touches `random` or Hypothesis directly; it asks a `ChoiceSource` for small
integers. Two backings exist:

* `ChoiceSource.from_seed(seed)`: a seeded `random.Random`, fast, for campaigns and
  benchmarks;
* `ChoiceSource.from_bytes(data)`: reads the choices from a byte string, for Hypothesis. When
  the bytes run out every choice is 0, so Hypothesis shrinking the bytes towards shorter and
  all-zero shrinks the generated object towards the simplest one;
* `ChoiceSource.recording(seed)`: draws from a seeded RNG and writes each choice down in the
  byte encoding, so `recorded()` is a byte string `from_bytes` replays into the same object
  (a guided campaign's corpus entries and mutants go through bytes). Its frames behave as a
  byte source's (a frame's choices past its n bytes are 0), so its stream is not
  `from_seed`'s: the blind campaign keeps `from_seed`, whose programs tests pin.

The contract every builder keeps: a choice of 0 means "the simplest option" (fewer blocks,
stop generating, the smallest constant, the first and simplest opcode). `boolean` is False on
0, so builders phrase booleans as "do the more complex thing?".
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

__all__ = ["ChoiceSource", "RecordingSource", "Weighted"]


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
    def from_bytes(data: bytes, frames: list | None = None) -> ChoiceSource:
        """`frames`, when given, collects (offset, n) of every frame the builders open."""
        return _ByteSource(data, frames)

    @staticmethod
    def recording(seed: int) -> RecordingSource:
        return RecordingSource(random.Random(seed))

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
    __slots__ = ("data", "pos", "frames", "base")

    def __init__(self, data: bytes, frames: list | None = None, base: int = 0):
        self.data = bytes(data)
        self.pos = 0
        self.frames = frames  # None, or where (offset, n) of each frame is written down
        self.base = base  # offset of this stream in the outermost one

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
        if self.frames is not None:
            self.frames.append((self.base + pos, n))
        return _ByteSource(self.data[pos : pos + n], self.frames, self.base + pos)

    def bytes(self, n: int) -> bytes:
        pos = self.pos
        self.pos = pos + n
        chunk = self.data[pos : pos + n]
        return chunk + bytes(n - len(chunk))


class RecordingSource(ChoiceSource):
    """Seeded choices written down as `_ByteSource` reads them back: `recorded()` replays
    through `ChoiceSource.from_bytes` into the same choices, hence the same program.

    Each choice is written in its smallest encoding (`below` as its value, a True `boolean`
    as the least byte that reads True). A frame is a child recorder with a budget of n
    bytes, padded with zeros to n in the parent. A choice that does not fit in what is left
    of its frame is not drawn: it is 0, as the byte source would read it, and so is every
    later choice of that frame, so replay never depends on bytes the frame cut off.
    """

    __slots__ = ("rng", "_random", "parts", "budget", "used")

    def __init__(self, rng: random.Random, budget: int | None = None):
        self.rng = rng
        self._random = rng.random
        self.parts: list = []  # bytes, or (child recorder, width) for a frame
        self.budget = budget  # bytes this stream may still hold; None: unbounded
        self.used = 0

    def _fits(self, k: int) -> bool:
        if self.budget is None:
            self.used += k
            return True
        if self.used + k <= self.budget:
            self.used += k
            return True
        self.used = self.budget  # cut off: the byte source reads zeros from here on
        return False

    def below(self, n: int) -> int:
        if n <= 1:
            return 0
        k = 1 if n <= 256 else ((n - 1).bit_length() + 7) // 8
        if not self._fits(k):
            return 0
        value = int(self._random() * n) if n < 1 << 50 else self.rng.randrange(n)
        self.parts.append(value.to_bytes(k, "big"))
        return value

    def boolean(self, p: float = 0.5) -> bool:
        threshold = max(1, min(256, round((1.0 - p) * 256)))
        if not self._fits(1):
            return False
        value = self._random() < p and threshold < 256  # 256: no byte reads True
        self.parts.append(bytes((threshold if value else 0,)))
        return value

    def bits(self, k: int) -> int:
        if k <= 0:
            return 0
        n = (k + 7) // 8
        if not self._fits(n):
            return 0
        value = self.rng.getrandbits(k)
        self.parts.append(value.to_bytes(n, "big"))
        return value

    def bytes(self, n: int) -> bytes:
        if not self._fits(n):
            return bytes(n)
        value = self.rng.randbytes(n)
        self.parts.append(value)
        return value

    def frame(self, n: int) -> ChoiceSource:
        if self.budget is None:
            width = n
        else:
            width = max(0, min(n, self.budget - self.used))
            self.used = min(self.budget, self.used + n)
        if self.budget is None:
            self.used += n
        child = RecordingSource(self.rng, width)
        self.parts.append((child, width))
        return child

    def recorded(self) -> bytes:
        """The choices so far, as the byte string that replays them."""
        out = bytearray()
        for part in self.parts:
            if isinstance(part, tuple):
                child, width = part
                data = child.recorded()
                out += data + bytes(width - len(data))
            else:
                out += part
        return bytes(out)
