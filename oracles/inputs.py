"""Inputs to one run of a function: a thread count, scalar uniforms and buffer contents.

`random_input_sets` draws them reproducibly from a seed, for the CLI and benchmarks; the
fuzzer's Hypothesis strategies build `InputSet`s of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agxir.ir import Function


@dataclass(frozen=True)
class InputSet:
    threads: int
    scalars: dict[str, int] = field(default_factory=dict)
    buffers: dict[str, bytes] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "threads": self.threads,
            "scalars": dict(self.scalars),
            "buffers": {name: data.hex() for name, data in self.buffers.items()},
        }

    @classmethod
    def from_json(cls, data: dict) -> InputSet:
        return cls(
            threads=int(data["threads"]),
            scalars={k: int(v) for k, v in data.get("scalars", {}).items()},
            buffers={k: bytes.fromhex(v) for k, v in data.get("buffers", {}).items()},
        )


class InputError(ValueError):
    """An input set that does not fit the function it is given to."""


def check_inputs(fn: Function, input_set: InputSet) -> None:
    if input_set.threads < 1:
        raise InputError("an input set needs at least one thread")
    for uniform in fn.uniforms:
        if uniform.is_buffer:
            data = input_set.buffers.get(uniform.name)
            if data is not None and len(data) != uniform.buffer_bytes:
                raise InputError(
                    f"buffer {uniform.name} holds {len(data)} bytes, "
                    f"the function declares {uniform.buffer_bytes}"
                )
        else:
            value = input_set.scalars.get(uniform.name, 0)
            if not 0 <= value < (1 << uniform.size):
                raise InputError(f"uniform {uniform.name} = {value} does not fit {uniform.size} bits")


def _interesting_scalar(rng: np.random.Generator, size: int) -> int:
    choice = rng.integers(0, 4)
    if choice == 0:
        return int(rng.integers(0, 16))
    if choice == 1:
        return (1 << size) - int(rng.integers(1, 16))
    if choice == 2:
        return 1 << int(rng.integers(0, size))
    return int(rng.integers(0, 1 << size, dtype=np.uint64)) if size == 64 else int(
        rng.integers(0, 1 << size)
    )


def random_input_sets(fn: Function, threads: int, seed: int, count: int = 1) -> list[InputSet]:
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(count):
        scalars = {}
        buffers = {}
        for uniform in fn.uniforms:
            if uniform.is_buffer:
                buffers[uniform.name] = rng.integers(0, 256, uniform.buffer_bytes, np.uint8).tobytes()
            else:
                scalars[uniform.name] = _interesting_scalar(rng, uniform.size)
        sets.append(InputSet(threads, scalars, buffers))
    return sets
