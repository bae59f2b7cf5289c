"""Scale: `verify` and `check` on big functions, to see that both grow linearly with size.

Builds straight-line functions of 10,000 and 100,000 instructions (a chain of `iadd`s) and
nests of counted loops (250 and 500 deep), and prints for each the seconds `verify`
(parse + verifier) and `check` (the harness with every pass in the campaign's pipelines
and every oracle, on the command's default input sets) take in this process, then the
ratio of the big one to the small one (linear growth gives ~10x for the straight lines;
for the nests, whose live sets themselves grow with the depth, 4x is quadratic and 8x
cubic, which is what `agxir.liveness`'s fixpoint is on them: docs/performance.md).

    python -m bench.scale                         # all four
    python -m bench.scale --only line             # the straight lines only
    python -m bench.scale --only line --sizes 5000 10000 20000

The builders (`straight_line`, `nested_loops`) are also what the tests use for deep and
long programs. Each figure is given twice: the process's CPU seconds (`time.process_time`,
what to compare across runs: it does not depend on what else the machine is running) and
wall-clock seconds (which do: quote the load with them).
"""

from __future__ import annotations

import argparse
import os
import time


def straight_line(count: int) -> str:
    """A function of `count` `iadd`s, each reading the one before (one value live at a
    time), ending in an export of the last."""
    lines = ["func @line(u0:32) {", "entry:", "  %v0:32 = iadd u0, #1 shift=0"]
    lines += [f"  %v{k}:32 = iadd %v{k - 1}, u0 shift=0" for k in range(1, count)]
    lines += [f"  export %v{count - 1} slot=0", "  stop", "}"]
    return "\n".join(lines) + "\n"


def nested_loops(depth: int, bound: str = "u0") -> str:
    """`depth` nested counted loops: loop k is `%ik = phi [#0, outer], [%nk, latch]` and
    `if_icmp %ik, <bound> cond=ult` into the next loop (the innermost: its latch) or out
    to the latch of the loop around it; each latch `%nk = iadd %ik, #1`. With u0 = n every
    loop runs n times per iteration of the one around it."""
    lines = ["func @nest(u0:32) {", "entry:", "  jump -> h0"]
    for k in range(depth):
        outer = "entry" if k == 0 else f"h{k - 1}"
        inner = f"h{k + 1}" if k + 1 < depth else f"l{k}"
        out = f"l{k - 1}" if k > 0 else "end"
        lines += [
            f"h{k}:",
            f"  %i{k}:32 = phi [#0, {outer}], [%n{k}, l{k}]",
            f"  if_icmp %i{k}, {bound} cond=ult inv=0 -> {inner}, {out}",
        ]
    for k in reversed(range(depth)):
        lines += [f"l{k}:", f"  %n{k}:32 = iadd %i{k}, #1 shift=0", f"  jump -> h{k}"]
    lines += ["end:", "  export %i0 slot=0", "  stop", "}"]
    return "\n".join(lines) + "\n"


def measure(text: str) -> tuple[float, float, int]:
    """(verify seconds, check seconds, findings) for one function's text, wall clock
    (`measure_cpu` gives CPU seconds as well)."""
    verify, check, findings, _cpu = measure_cpu(text)
    return verify, check, findings


def measure_cpu(text: str) -> tuple[float, float, int, tuple[float, float]]:
    """(verify seconds, check seconds, findings, (verify CPU seconds, check CPU seconds))."""
    import argparse as _argparse

    from agxir.text import parse_function
    from agxir.verifier import verify
    from fuzz.commands.loaders import seeded_input_sets
    from fuzz.commands.units import units_under_test
    from fuzz.harness import Harness

    start, cpu = time.perf_counter(), time.process_time()
    fn = parse_function(text)
    errors = verify(fn)
    verify_seconds, verify_cpu = time.perf_counter() - start, time.process_time() - cpu
    if errors:
        raise SystemExit(f"bench.scale: the built function does not verify: {errors[0]}")
    args = _argparse.Namespace(passes=None, python_passes=[], pass_commands=[], threads=32,
                               sets=8, seed=1, inputs=None, tv=False)
    start, cpu = time.perf_counter(), time.process_time()
    fn = parse_function(text)
    _units, pipelines = units_under_test(args, fn.level)
    harness = Harness(seeded_input_sets(fn, args))
    findings = harness.check(fn, pipelines)
    check_seconds, check_cpu = time.perf_counter() - start, time.process_time() - cpu
    for finding in findings:
        print(f"  finding: {finding.pass_name}: {finding.oracle}: {finding.message[:160]}")
    return verify_seconds, check_seconds, len(findings), (verify_cpu, check_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("line", "nest"), help="one family only")
    parser.add_argument("--sizes", type=int, nargs="+", metavar="N",
                        help="sizes to measure instead of the family's two (first: the base "
                        "of the ratios)")
    args = parser.parse_args()
    families = {
        "line": ("straight line", straight_line, (10_000, 100_000)),
        "nest": ("nested loops", nested_loops, (250, 500)),
    }
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for key, (title, build, sizes) in families.items():
        if args.only and key != args.only:
            continue
        sizes = args.sizes or sizes
        figures = []
        for size in sizes:
            verify_seconds, check_seconds, findings, (verify_cpu, check_cpu) = measure_cpu(build(size))
            figures.append((verify_cpu, check_cpu))
            print(f"{title} {size:>7}: verify {verify_cpu:7.2f} s CPU ({verify_seconds:.2f} wall)"
                  f"  check {check_cpu:7.2f} s CPU ({check_seconds:.2f} wall)  findings {findings}")
        (v1, c1) = figures[0]
        for size, (v2, c2) in zip(sizes[1:], figures[1:]):
            print(f"{title} {size}/{sizes[0]}: verify x{v2 / v1:.1f}  check x{c2 / c1:.1f}"
                  f"  (CPU; linear: x{size / sizes[0]:.1f})")
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
