"""`agxfuzz interp`: run one function in the interpreter oracle and show the outcome."""

from __future__ import annotations

import json
import random
import sys

from fuzz.commands.loaders import input_sets_for, load_function


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


def _print_text(outcomes, sets) -> None:
    for number, (outcome, input_set) in enumerate(zip(outcomes, sets, strict=True)):
        print(f"input set {number} ({input_set.threads} threads): {outcome.describe()}")
        if outcome.kind != "returned":
            continue
        for thread, outputs in enumerate(outcome.outputs):
            if outputs:
                shown = ", ".join(
                    f"slot{slot}=" + ("-" if value is None else f"{value:#x}")
                    for slot, value in enumerate(outputs)
                )
                print(f"  thread {thread}: {shown}")
        for name, raw in outcome.memory.items():
            head = raw[:32].hex(" ", 4)
            more = f" ... ({len(raw)} bytes)" if len(raw) > 32 else ""
            print(f"  {name}: {head}{more}")


def run_interp(args) -> int:
    from oracles.interp import DEFAULT_FUEL, CompiledFunction

    fn = load_function(args.file)
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    sets = input_sets_for(fn, args)
    outcomes = CompiledFunction(fn).run(sets, fuel=args.fuel or DEFAULT_FUEL)
    if args.json:
        report = {
            "seed": args.seed,
            "input_sets": [s.to_json() for s in sets],
            "outcomes": [_outcome_json(o) for o in outcomes],
        }
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"seed: {args.seed}")
        _print_text(outcomes, sets)
    return 0
