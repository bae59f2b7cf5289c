"""The fixed programs the benchmarks run: a loop-free one of a chosen length and a loop.

They are built as text from a seeded RNG so every run measures the same code; the mix is
integer ALU, float, compare/select, bit-field and memory operations, as shaders have.
"""

from __future__ import annotations

import random

from agxir.text import parse_function

HEADER = "func @{name}(u0:ptr[4096], u1:ptr[4096], u2:32, u3:32) {{"

BINARY_INT = [
    ("iadd", "shift={}", lambda r: r.randrange(5)),
    ("imad", "shift={}", lambda r: r.randrange(5)),
    ("bitop", "tt={:#x}", lambda r: r.choice([0x1, 0x3, 0xB, 0xD])),
    ("and", "", None),
    ("xor", "", None),
    ("asr", "", None),
]


def _int_op(rng: random.Random, dest: str, values: list[str]) -> str:
    kind = rng.randrange(10)
    a, b, c = (rng.choice(values[-8:]) for _ in range(3))
    if kind < 5:
        name, attr, draw = rng.choice(BINARY_INT)
        operands = f"{a}, {b}, {c}" if name == "imad" else f"{a}, {b}"
        suffix = " " + attr.format(draw(rng)) if attr else ""
        return f"  {dest}:32 = {name} {operands}{suffix}"
    if kind == 5:
        return f"  {dest}:32 = icmpsel {a}, {b}, {c}, u2 cond={rng.choice(['ult', 'slt', 'ueq'])}"
    if kind == 6:
        return f"  {dest}:32 = bfeil {a}, {b}, #{rng.randrange(32)} mask={rng.randrange(1, 17)}"
    if kind == 7:
        return f"  {dest}:32 = fadd {a}, {b}.abs"
    if kind == 8:
        return f"  {dest}:32 = ffma {a}, {b}, #0.5"
    return f"  {dest}:32 = fcmpsel {a}, {b}, {c}, u3 cond={rng.choice(['lt', 'ge', 'ltn'])}"


def straight_line_text(length: int = 100, seed: int = 1) -> str:
    """`length` instructions in one block: loads, `length - 8` ALU operations, stores."""
    rng = random.Random(seed)
    lines = [HEADER.format(name="straight_line"), "block0:"]
    lines += [
        "  %tid:32 = get_sr sr=thread_id",
        "  %x:32 = device_load u0, %tid fmt=i32 shift=0",
        "  %y:32 = device_load u0, %tid fmt=i32 shift=1",
    ]
    values = ["%tid", "%x", "%y", "u2", "u3"]
    for k in range(length - 8):
        dest = f"%v{k}"
        lines.append(_int_op(rng, dest, values))
        values.append(dest)
    lines += [
        f"  device_store {values[-1]}, u1, %tid fmt=i32 shift=0",
        f"  export {values[-2]} slot=0",
        f"  export {values[-3]} slot=1",
        f"  export {values[-4]} slot=2",
        "  stop",
        "}",
    ]
    return "\n".join(lines) + "\n"


def loop_text(body: int = 16, seed: int = 2) -> str:
    """A loop running 16 + (tid mod 16) times with two phis and `body` ALU operations."""
    rng = random.Random(seed)
    lines = [
        HEADER.format(name="loop"),
        "entry:",
        "  %tid:32 = get_sr sr=thread_id",
        "  %lane:32 = and %tid, #15",
        "  %trips:32 = iadd %lane, #16 shift=0",
        "  %zero:32 = mov_imm value=0x0",
        "  jump -> loop",
        "loop:",
        "  %i:32 = phi [%zero, entry], [%next, loop]",
        "  %acc:32 = phi [%tid, entry], [%acc2, loop]",
        "  %x:32 = device_load u0, %i fmt=i32 shift=0",
    ]
    values = ["%i", "%acc", "%x", "u2", "u3"]
    for k in range(body):
        dest = f"%v{k}"
        lines.append(_int_op(rng, dest, values))
        values.append(dest)
    lines += [
        f"  %acc2:32 = xor %acc, {values[-1]}",
        "  %next:32 = iadd %i, #1 shift=0",
        "  if_icmp %next, %trips cond=ult inv=0 -> loop, exit",
        "exit:",
        "  device_store %acc2, u1, %tid fmt=i32 shift=0",
        "  export %acc2 slot=0",
        "  stop",
        "}",
    ]
    return "\n".join(lines) + "\n"


def straight_line(length: int = 100, seed: int = 1):
    return parse_function(straight_line_text(length, seed), "<straight_line>")


def loop(body: int = 16, seed: int = 2):
    return parse_function(loop_text(body, seed), "<loop>")


def idle_walk_text(size: int) -> str:
    """A counted loop (u0 iterations) whose body holds an if no thread takes, of `size`
    instructions: each thread runs ~4 instructions an iteration, the wave interpreter walks
    all of them with no lane active, so a lowered copy runs out of the budget its input's
    steps give it (an inconclusive refinement step, docs/guarantees.md)."""
    big = [f"  %b{k}:32 = iadd {'%i' if k == 0 else f'%b{k - 1}'}, #1 shift=0"
           for k in range(size)]
    return "\n".join([
        "func @walk(u0:32) {", "entry:", "  %tid:32 = get_sr sr=thread_id", "  jump -> head",
        "head:", "  %i:32 = phi [#0, entry], [%n, latch]",
        "  if_icmp %tid, #99 cond=ueq inv=0 -> big, latch",
        "big:", *big, f"  export %b{size - 1} slot=1", "  jump -> latch",
        "latch:", "  %n:32 = iadd %i, #1 shift=0", "  if_icmp %n, u0 cond=ult inv=0 -> head, exit",
        "exit:", "  export %n slot=0", "  stop", "}",
    ]) + "\n"
