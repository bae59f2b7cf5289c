"""The Mesa bridge's overhead per program: what it costs to hand a program to Mesa and read
Mesa's answer back, beside what Mesa's passes themselves cost.

    python bench/mesa_bridge.py [--programs N] [--repeat R] [--passes LIST]

For N generated translatable programs (after lower-cf), each timed R times (the median
kept), on one persistent bridge:
  encode   Python: the Function as wire lines (fuzz/mesa/wire.py)
  empty    a request with no pass: send, fork a child, parse into agx_context, agx_validate,
           print back, read the answer (the bridge's whole round trip)
  decode   Python: the answer back into a Function
  passes   the same request with LIST (default: mesa:backend's order)
The bridge's overhead is encode + empty + decode; Mesa's own work is passes - empty. The
target is under 1 ms of overhead per program. Wall times; on a loaded machine they rise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agxir.machine.lower_cf import structurable  # noqa: E402
from fuzz.generate import ChoiceSource  # noqa: E402
from fuzz.mesa.build import build_bridge  # noqa: E402
from fuzz.mesa.client import BACKEND, BridgeClient, output_level  # noqa: E402
from fuzz.mesa.translatable import translatable_program  # noqa: E402
from fuzz.mesa.wire import decode, encode  # noqa: E402
from fuzz.passes_under_test import registered  # noqa: E402


def programs(count: int):
    seed = 0
    while count:
        fn = translatable_program(ChoiceSource.from_seed(seed))
        seed += 1
        if structurable(fn) is None:
            registered("lower-cf").run(fn)
            count -= 1
            yield fn


def timed(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--passes", default=",".join(BACKEND),
                        help="bridge pass names, comma-separated (default: the backend order)")
    args = parser.parse_args()
    passes = [p for p in args.passes.split(",") if p]
    bridge = build_bridge()
    rows = []
    instructions = 0
    with BridgeClient(bridge.path) as client:
        client.request([], ["shader 1 0", "block 0 -1 -1 0"])  # start the process first
        for fn in programs(args.programs):
            instructions += fn.instruction_count()
            t_encode, (lines, names) = timed(lambda fn=fn: encode(fn), args.repeat)
            t_empty, empty = timed(lambda lines=lines: client.request([], lines), args.repeat)
            t_decode, _ = timed(lambda e=empty, n=names, fn=fn: decode(e.lines, n, fn.level),
                                args.repeat)
            t_passes, done = timed(lambda lines=lines: client.request(passes, lines),
                                   args.repeat)
            if done.status == "ok":  # the answer of a real pass list decodes too
                decode(done.lines, names, output_level(fn, passes))
            rows.append((t_encode, t_empty, t_decode, t_passes, done.status))
    n = len(rows)
    ms = 1000.0

    def column(k: int) -> list[float]:
        return [row[k] * ms for row in rows]

    overhead = [a + b + c for a, b, c in zip(column(0), column(1), column(2), strict=True)]
    mesa = [p - e for p, e in zip(column(3), column(1), strict=True)]
    print(f"Mesa {bridge.version}, {n} programs (mean {instructions / n:.0f} instructions "
          f"at the exec level), median of {args.repeat} per program; passes: "
          f"{' '.join(passes)}")
    for label, values in (("encode (Python)", column(0)), ("empty request (round trip)",
                          column(1)), ("decode (Python)", column(2)),
                          ("bridge overhead (sum)", overhead),
                          ("request with the passes", column(3)),
                          ("Mesa's own work (passes - empty)", mesa)):
        print(f"  {label:<34} median {statistics.median(values):7.3f} ms   "
              f"p90 {sorted(values)[int(0.9 * (n - 1))]:7.3f} ms")
    crashed = sum(1 for row in rows if row[4] != "ok")
    if crashed:
        print(f"  ({crashed} programs did not come back ok through the passes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
