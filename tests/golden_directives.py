"""Reads the expectations a golden `.agx` file keeps inline, in `;` comments.

Directives (one per comment line, `; KEY: rest`):

    PARSE-ERROR: L:C: text      parsing fails at line L, column C with a message containing text
    VERIFY-ERROR: text          verification fails with a message containing text (repeatable)
    INPUT: threads=N name=v ..  an input set: scalar uniforms as integers, buffers as
                                zero | iota8 | iota16 | iota32 | hex:<bytes>
    FUEL: N                     instructions per thread for the runs below
    OUTCOME: returned | undefined: text | out-of-fuel      of the last INPUT
    OUTPUT: slot=K v0, v1, ...  each thread's export to slot K in the last INPUT (- for none)
    MEMORY: name OFFSET hex     bytes of buffer `name` from OFFSET after the last INPUT
    LIVE-IN: block %a %b ..     the values live into `block` (- for none), checked against
                                agxir.liveness and the reference (repeatable)
    LIVE-OUT: block %a %b ..    the same for the values live out of `block`
    MAX-PRESSURE: N             the maximum register pressure, in 16-bit halves
    PASS: name[,name...]        run these passes (agxir.passes) on a clone of the function
    EXPECT: line                a line of the transformed function as printed (indentation
                                aside); EXPECT lines must appear in this order (repeatable)
    EXPECT-UNCHANGED            (no colon) every pass reports no change and the text is equal

Files live in tests/golden and tests/golden/machine. A `func.exec|vreg|machine` file's
runs (INPUT and what follows it) are on the wave interpreter (oracles.machine), one wave per
INPUT; FUEL then counts instructions per wave. PASS names are looked up in agxir.passes.PASSES,
then agxir.machine.pipeline.MACHINE_PASSES; a result that is not SSA runs on the wave
interpreter.

A PASS file's result must verify; its INPUT runs whose outcome is returned (or not given)
must give the same OUTPUT/MEMORY after the passes too. With EXPECT lines, some pass must
report a change.

A file with no PARSE-ERROR or VERIFY-ERROR must parse, verify and print back to itself
once comments are removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DIRECTIVE = re.compile(r"^\s*;\s*([A-Z-]+):\s*(.*?)\s*$")
UNCHANGED = re.compile(r"^\s*;\s*EXPECT-UNCHANGED\s*$")


@dataclass
class RunExpectation:
    threads: int
    scalars: dict[str, int]
    buffer_specs: dict[str, str]
    fuel: int | None
    outcome: str | None = None
    outputs: list[tuple[int, list[int | None]]] = field(default_factory=list)
    memory: list[tuple[str, int, bytes]] = field(default_factory=list)


@dataclass
class Expectations:
    parse_error: tuple[int, int, str] | None = None
    verify_errors: list[str] = field(default_factory=list)
    runs: list[RunExpectation] = field(default_factory=list)
    passes: list[str] = field(default_factory=list)
    expect: list[str] = field(default_factory=list)
    expect_unchanged: bool = False
    live_in: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    live_out: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    max_pressure: int | None = None

    @property
    def has_liveness(self) -> bool:
        return bool(self.live_in or self.live_out) or self.max_pressure is not None


def _int(text: str) -> int:
    return int(text, 0)


def _live_set(rest: str) -> tuple[str, frozenset[str]]:
    """`block %a %b` or `block -`: the block name and the value names without `%`."""
    block, *values = rest.split()
    if values == ["-"]:
        return block, frozenset()
    if not values or not all(value.startswith("%") for value in values):
        raise ValueError(f"expected `block %a %b ...` or `block -`, found {rest!r}")
    return block, frozenset(value[1:] for value in values)


def read_expectations(text: str) -> Expectations:
    found = Expectations()
    fuel = None
    for line in text.splitlines():
        if UNCHANGED.match(line):
            found.expect_unchanged = True
            continue
        match = DIRECTIVE.match(line)
        if not match:
            continue
        key, rest = match.groups()
        if key == "PARSE-ERROR":
            where, message = rest.split(": ", 1)
            line_no, col = where.split(":")
            found.parse_error = (int(line_no), int(col), message)
        elif key == "VERIFY-ERROR":
            found.verify_errors.append(rest)
        elif key == "FUEL":
            fuel = _int(rest)
        elif key == "INPUT":
            fields = dict(item.split("=", 1) for item in rest.split())
            threads = _int(fields.pop("threads"))
            scalars, buffers = {}, {}
            for name, value in fields.items():
                if value[0].isdigit():
                    scalars[name] = _int(value)
                else:
                    buffers[name] = value
            found.runs.append(RunExpectation(threads, scalars, buffers, fuel))
        elif key == "OUTCOME":
            found.runs[-1].outcome = rest
        elif key == "OUTPUT":
            slot_field, values = rest.split(None, 1)
            slot = _int(slot_field.removeprefix("slot="))
            parsed = [None if v.strip() == "-" else _int(v) for v in values.split(",")]
            found.runs[-1].outputs.append((slot, parsed))
        elif key == "MEMORY":
            name, offset, data = rest.split(None, 2)
            found.runs[-1].memory.append((name, _int(offset), bytes.fromhex(data)))
        elif key == "PASS":
            found.passes.extend(name.strip() for name in rest.split(","))
        elif key == "EXPECT":
            found.expect.append(rest)
        elif key == "LIVE-IN":
            found.live_in.append(_live_set(rest))
        elif key == "LIVE-OUT":
            found.live_out.append(_live_set(rest))
        elif key == "MAX-PRESSURE":
            found.max_pressure = _int(rest)
        else:
            raise ValueError(f"unknown golden directive {key!r}")
    return found


def buffer_contents(spec: str, size: int) -> bytes:
    if spec == "zero":
        return bytes(size)
    if spec.startswith("iota"):
        width = int(spec[4:]) // 8
        count = size // width
        return b"".join(i.to_bytes(width, "little", signed=False) for i in range(count)).ljust(
            size, b"\0"
        )
    if spec.startswith("hex:"):
        return bytes.fromhex(spec[4:]).ljust(size, b"\0")
    raise ValueError(f"unknown buffer contents {spec!r}")
