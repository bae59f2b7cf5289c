"""The Mesa bridge's overhead per program: what it costs to hand a program to Mesa and read
Mesa's answer back, beside what Mesa's passes themselves cost.

    python bench/mesa_bridge.py [--programs N] [--repeat R] [--passes LIST]

For N generated translatable programs (after lower-cf), each timed R times (the median
kept), on one persistent bridge:
  encode   Python: the Function as wire lines (fuzz/mesa/wire.py)
  empty    a request with no pass: send, hand it to the bridge's worker, parse into
           agx_context, agx_validate, print back, read the answer (the whole round trip)
  decode   Python: the answer back into a Function
  passes   the same request with LIST (default: mesa:backend's order)
The bridge's overhead is encode + empty + decode; Mesa's own work is passes - empty. The
target is under 1 ms of overhead per program. Wall times (median per program) rise on a
loaded machine, so CPU times are printed too (mean per call over every repeat, and the
median of Python's): the Python side by `time.process_time`, the bridge process and its
live worker by /proc/PID/schedstat (exact run time), the workers it has waited for (a crash,
a timeout, a replaced worker) by its cutime + cstime (clock ticks, summed over all requests).
"""

from __future__ import annotations

import argparse
import os
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


def _run_ns(pid: int) -> int:
    """The nanoseconds a live process has run (its /proc/PID/schedstat: exact, unlike the
    tick-sampled utime/stime, which miss most of a worker's short bursts)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except FileNotFoundError:  # a worker that ended between the listing and the read
        return 0


def bridge_cpu(pid: int) -> float:
    """Seconds of CPU the bridge process and its live worker have used (exact), plus the
    workers it has waited for (cutime + cstime, in clock ticks)."""
    seconds = _run_ns(pid) / 1e9
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            seconds += _run_ns(int(child)) / 1e9
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return seconds + sum(int(f) for f in fields[13:15]) / os.sysconf("SC_CLK_TCK")


class Cpu:
    """CPU seconds per stage, summed over every repeat of every program."""

    def __init__(self) -> None:
        self.python: dict[str, list[float]] = {}
        self.bridge: dict[str, float] = {}

    def add(self, stage: str, python: float, bridge: float = 0.0) -> None:
        self.python.setdefault(stage, []).append(python)
        self.bridge[stage] = self.bridge.get(stage, 0.0) + bridge

    def per_call_ms(self, stage: str) -> tuple[float, float]:
        """Mean Python and bridge milliseconds per call."""
        n = len(self.python[stage])
        return 1000.0 * sum(self.python[stage]) / n, 1000.0 * self.bridge[stage] / n

    def python_median_ms(self, stage: str) -> float:
        """The median of Python's CPU per call: robust to the collector's pauses and to
        preemption, which the mean carries (the bridge's part has no per-call median: a
        waited-for worker's CPU arrives in clock ticks)."""
        return 1000.0 * statistics.median(self.python[stage])


def timed(function, repeat: int, cpu: Cpu, stage: str, pid: int | None = None):
    """The median wall time of `repeat` calls, and the last result; each call's CPU time
    (Python's, and the bridge's when `pid` is given) added to `cpu` under `stage`."""
    times, result = [], None
    for _ in range(repeat):
        bridge_before = bridge_cpu(pid) if pid else 0.0
        cpu_before = time.process_time()
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
        python = time.process_time() - cpu_before
        cpu.add(stage, python, bridge_cpu(pid) - bridge_before if pid else 0.0)
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
    cpu = Cpu()
    r = args.repeat
    with BridgeClient(bridge.path) as client:
        client.request([], ["shader 1 0", "block 0 -1 -1 0"])  # start the process first
        pid = client.process.pid
        for fn in programs(args.programs):
            instructions += fn.instruction_count()
            t_encode, (lines, names) = timed(lambda fn=fn: encode(fn), r, cpu, "encode")
            t_empty, empty = timed(lambda lines=lines: client.request([], lines), r, cpu,
                                   "empty", pid)
            t_decode, _ = timed(lambda e=empty, n=names, fn=fn: decode(e.lines, n, fn.level),
                                r, cpu, "decode")
            t_passes, done = timed(lambda lines=lines: client.request(passes, lines), r, cpu,
                                   "passes", pid)
            if client.process is None or client.process.pid != pid:
                raise SystemExit("the bridge restarted during the bench: its CPU is lost")
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
    print(f"CPU time per program, mean over every call (and Python's median; load average "
          f"{os.getloadavg()[0]:.1f}):")
    sums, medians = [], []
    for stage, label in (("encode", "encode (Python)"), ("empty", "empty request (round trip)"),
                         ("decode", "decode (Python)")):
        python, bridged = cpu.per_call_ms(stage)
        sums.append(python + bridged)
        medians.append(cpu.python_median_ms(stage) + bridged)
        print(f"  {label:<34} {python + bridged:7.3f} ms   (Python {python:.3f}, median "
              f"{cpu.python_median_ms(stage):.3f}; bridge {bridged:.3f})")
    print(f"  {'bridge overhead (sum)':<34} {sum(sums):7.3f} ms   (with Python's medians "
          f"{sum(medians):.3f})")
    python, bridged = cpu.per_call_ms("passes")
    empty_python, empty_bridge = cpu.per_call_ms("empty")
    mesa_label = "Mesa's own work (passes - empty)"
    print(f"  {mesa_label:<34} {python + bridged - empty_python - empty_bridge:7.3f} ms")
    crashed = sum(1 for row in rows if row[4] != "ok")
    if crashed:
        print(f"  ({crashed} programs did not come back ok through the passes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
