"""`agxfuzz interp`: run one function in the interpreter oracle and show the outcome.

An SSA function runs on the per-thread interpreter (oracles.interp); an exec, vreg or
machine one on the wave interpreter (oracles.machine), one wave per input set. The text
form is stable so FileCheck can match it (docs/goldens.md): per input set a line with its
outcome, then each thread's exports (or, with --by-slot, each slot's exports across the
threads) and the bytes of the buffers --memory names.
"""

from __future__ import annotations

import json
import random
import sys

from agxir.ir import SSA
from fuzz.commands.errors import UsageError
from fuzz.commands.loaders import input_sets_for, load_function, parse_input_spec
from oracles.interp import DEFAULT_FUEL, CompiledFunction
from oracles.machine import CompiledWave


def _outcome_json(outcome) -> dict:
    data = {"outcome": outcome.kind}
    if outcome.kind == "returned":
        data["outputs"] = [list(thread) for thread in outcome.outputs]
        data["memory"] = {name: raw.hex() for name, raw in outcome.memory.items()}
    elif outcome.kind == "undefined":
        data["reason"] = outcome.reason
        data["thread"] = outcome.thread
    else:
        data["fuel"] = outcome.fuel
    return data


def _value(value: int | None) -> str:
    return "-" if value is None else f"{value:#x}"


def _print_text(outcomes, sets, *, by_slot: bool, memory: list[tuple[str, int, int | None]]):
    for number, (outcome, input_set) in enumerate(zip(outcomes, sets, strict=True)):
        print(f"input set {number} ({input_set.threads} threads): {outcome.describe()}")
        if outcome.kind != "returned":
            continue
        if by_slot:
            slots = max((len(thread) for thread in outcome.outputs), default=0)
            for slot in range(slots):
                values = [thread[slot] if slot < len(thread) else None
                          for thread in outcome.outputs]
                print(f"  slot {slot}: " + ", ".join(_value(v) for v in values))
        else:
            for thread, outputs in enumerate(outcome.outputs):
                if outputs:
                    shown = ", ".join(f"slot{slot}={_value(value)}"
                                      for slot, value in enumerate(outputs))
                    print(f"  thread {thread}: {shown}")
        if memory:
            for name, offset, length in memory:
                raw = outcome.memory[name]
                end = len(raw) if length is None else min(len(raw), offset + length)
                print(f"  {name}[{offset}:{end}]: {raw[offset:end].hex()}")
        else:
            for name, raw in outcome.memory.items():
                head = raw[:32].hex(" ", 4)
                more = f" ... ({len(raw)} bytes)" if len(raw) > 32 else ""
                print(f"  {name}: {head}{more}")


def _memory_requests(fn, specs: list[str]) -> list[tuple[str, int, int | None]]:
    """--memory NAME[:OFFSET[:LENGTH]]: which bytes of which buffer to print in full."""
    buffers = {u.name: u.buffer_bytes for u in fn.uniforms if u.is_buffer}
    requests = []
    for spec in specs:
        name, *numbers = spec.split(":")
        if name not in buffers:
            known = ", ".join(buffers) or "none"
            raise UsageError(f"--memory {spec!r}: {fn.name} has no buffer {name} "
                             f"(its buffers: {known})")
        try:
            if len(numbers) > 2:
                raise ValueError
            offset = int(numbers[0], 0) if numbers else 0
            length = int(numbers[1], 0) if len(numbers) == 2 else None
        except ValueError:
            raise UsageError(f"--memory {spec!r}: expected NAME[:OFFSET[:LENGTH]]") from None
        if not 0 <= offset <= buffers[name] or (length is not None and length < 0):
            raise UsageError(f"--memory {spec!r}: outside {name}'s {buffers[name]} bytes")
        requests.append((name, offset, length))
    return requests


def run_interp(args) -> int:
    fn = load_function(args.file)
    memory = _memory_requests(fn, getattr(args, "memory", None) or [])
    given = getattr(args, "input", None)
    if given:
        if args.inputs:
            raise UsageError("--input and --inputs: give the input sets one way")
        sets = [parse_input_spec(fn, spec) for spec in given]
    else:
        if args.seed is None:
            args.seed = random.SystemRandom().randrange(1 << 32)
        sets = input_sets_for(fn, args)
    compiled = CompiledFunction(fn) if fn.level == SSA else CompiledWave(fn)
    outcomes = compiled.run(sets, fuel=args.fuel or DEFAULT_FUEL)
    if args.json:
        report = {
            "seed": None if given else args.seed,
            "input_sets": [s.to_json() for s in sets],
            "outcomes": [_outcome_json(o) for o in outcomes],
        }
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        if not given:  # explicit input sets involve no randomness: nothing to replay
            print(f"seed: {args.seed}")
        _print_text(outcomes, sets, by_slot=getattr(args, "by_slot", False), memory=memory)
    return 0
