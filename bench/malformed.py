"""Malformed inputs by the million: mutate the golden files and count anything raised that
is not a documented error.

    python bench/malformed.py [--inputs N] [--seed S] [--interpret]

Documented: ParseError from parsing; verifier errors are values; InputError from the
interpreter's input checks. Everything else (ValueError, IndexError, ...) is counted and
the first few are printed with the input that raised them. Target: 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

from agxir.ir import SSA

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.text import ParseError, parse_function, print_function  # noqa: E402
from agxir.verifier import verify  # noqa: E402
from oracles.inputs import InputError, random_input_sets  # noqa: E402

PIECES = ["#", "%", ":", "=", ",", "->", "[", "]", "{", "}", "9" * 5000, "0x" + "f" * 300,
          "ptr[", "func.", ".abs", ".sat", "phi", "r0l", "d3", "h7:32", "v1:16", "\ufeff",
          "\n", " ", "@", ";", "-1", "1.5", "0", "65536", "4294967296", "ptr[99999999999]"]


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        kind = rng.randint(0, 2)
        if kind == 0:
            text = text[:at] + rng.choice(PIECES) + text[at:]
        elif kind == 1:
            text = text[:at] + text[at + rng.randint(1, 12):]
        else:
            text = text[:at] + "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(1, 3))) + text[at:]
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--interpret", action="store_true",
                        help="also run every input that verifies (slower)")
    args = parser.parse_args()
    golden = Path(__file__).resolve().parent.parent / "tests" / "golden"
    texts = [p.read_text() for p in sorted(golden.rglob("*.agx"))]
    rng = random.Random(args.seed)
    counts = {"parse error": 0, "verifier errors": 0, "valid": 0, "undocumented": 0}
    started = time.perf_counter()
    for index in range(args.inputs):
        text = mutate(rng, rng.choice(texts))
        try:
            try:
                fn = parse_function(text, "mutant.agx")
            except ParseError:
                counts["parse error"] += 1
                continue
            errors = verify(fn)
            print_function(fn)
            if errors:
                counts["verifier errors"] += 1
                continue
            counts["valid"] += 1
            if args.interpret and all(u.buffer_bytes is None or u.buffer_bytes <= 1 << 16 for u in fn.uniforms):
                from oracles.interp import CompiledFunction
                from oracles.machine import run_wave

                try:
                    sets = random_input_sets(fn, 2, seed=index, count=1)
                    if fn.level == SSA:
                        CompiledFunction(fn).run(sets, fuel=2000)
                    else:
                        run_wave(fn, sets, fuel=2000)
                except InputError:
                    pass
        except Exception:
            counts["undocumented"] += 1
            if counts["undocumented"] <= 3:
                print(f"input {index} raised:\n{traceback.format_exc(limit=3)}{text[:400]!r}\n")
    seconds = time.perf_counter() - started
    print(f"{args.inputs} mutated inputs in {seconds:.0f} s ({args.inputs / seconds:.0f}/s), seed "
          f"{args.seed}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
