"""`agxfuzz interp`: run one function in the interpreter oracle and show the outcome."""

from __future__ import annotations

import json
import random
import sys

from fuzz.cli import UsageError


def input_sets_for(fn, args):
    from oracles.inputs import InputError, InputSet, check_inputs, random_input_sets

    if args.inputs:
        try:
            with open(args.inputs, encoding="utf-8") as handle:
                data = json.load(handle)
            sets = [InputSet.from_json(item) for item in data]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UsageError(f"{args.inputs}: not a list of input sets: {error}") from None
        for input_set in sets:
            try:
                check_inputs(fn, input_set)
            except InputError as error:
                raise UsageError(f"{args.inputs}: {error}") from None
        return sets
    return random_input_sets(fn, args.threads, args.seed, args.sets)


def seeded_input_sets(fn, args):
    """The input sets of --inputs, or random ones from --seed (drawn if not given, and
    printed so the run can be replayed)."""
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    sets = input_sets_for(fn, args)
    if not args.inputs:
        print(f"seed: {args.seed}")
    return sets


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


def run_interp(fn, args) -> int:
    from oracles.interp import DEFAULT_FUEL, CompiledFunction

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
