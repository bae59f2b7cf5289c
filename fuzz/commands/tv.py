"""`agxfuzz tv BEFORE AFTER`: translation validation of one loop-free function pair.

Prints `proved` (exit 0), `counterexample: thread T: ...` with the input set as JSON and
whether the interpreter reproduces it (exit 1), or `unknown: reason` (exit 3): z3 ran out of
time, or a function has a loop, which tv cannot decide (the interpreter-based `check` can).
A parse or verifier error, or functions with different uniforms or buffers (not a before
and after pair) are one-line errors, bad input (exit 2). `--json` prints one JSON object
instead, with the same exit statuses.

Reasoning is per thread (see `oracles.smt.refinement`): data races are out of scope here;
`agxfuzz check` runs the interpreter, which catches them.
"""

from __future__ import annotations

import json
import sys

from fuzz.commands.errors import UsageError
from fuzz.commands.limits import check_input_size
from fuzz.commands.loaders import load_function
from oracles.smt.function import loop_header
from oracles.smt.refinement import InterfaceMismatch, check_refinement

EXIT_PROVED, EXIT_COUNTEREXAMPLE, EXIT_UNKNOWN = 0, 1, 3


def _loop(fn, role: str) -> str | None:
    """Why tv cannot decide `fn` (it has a loop), or None."""
    header = loop_header(fn)
    if header is None:
        return None
    return f"tv decides loop-free functions only; {role} has a loop at block {header.name}"


def _result_json(result) -> dict:
    data = {"result": result.kind}
    if result.kind == "counterexample":
        data.update(
            thread=result.thread,
            description=result.description,
            input_set=result.input_set.to_json(),
            interpreter_confirms=result.replay_confirms,
            interpreter=result.replay,
        )
    elif result.kind == "unknown":
        data["reason"] = result.reason
    return data


def run_tv(args) -> int:
    """`args`: before, after (paths), threads (int), timeout (ms), json (bool)."""
    before = load_function(args.before)
    after = load_function(args.after)
    undecidable = _loop(before, "BEFORE") or _loop(after, "AFTER")
    if undecidable:  # not bad usage: a question tv cannot answer, like a z3 timeout
        if getattr(args, "json", False):
            json.dump({"result": "unknown", "reason": undecidable}, sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            print(f"unknown: {undecidable}")
        return EXIT_UNKNOWN
    threads = getattr(args, "threads", None) or 32
    check_input_size(threads, 1, "--threads")
    timeout = getattr(args, "timeout", None) or 10000
    try:
        result = check_refinement(before, after, threads=threads, timeout_ms=timeout)
    except InterfaceMismatch as error:
        raise UsageError(f"{args.before}, {args.after}: {error}") from None
    if getattr(args, "json", False):
        json.dump(_result_json(result), sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif result.kind == "counterexample":
        print(result.describe())
        print("input set: " + json.dumps(result.input_set.to_json()))
        verdict = "confirms" if result.replay_confirms else "does not confirm"
        print(f"interpreter {verdict}: {result.replay}")
    else:
        print(result.describe())
    return {
        "proved": EXIT_PROVED,
        "counterexample": EXIT_COUNTEREXAMPLE,
        "unknown": EXIT_UNKNOWN,
    }[result.kind]
