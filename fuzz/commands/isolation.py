"""Checking passes on one program in a child process, so a pass that hangs, crashes or eats
memory becomes a finding (for `check` and `repro`), never the command's own death."""

from __future__ import annotations

from fuzz.commands.errors import InternalError

HANG_GRACE = 20.0  # seconds a pass may overrun its deadline before its process is killed
PASS_MEMORY_MB = 4096  # address space of the process that runs passes for check and repro


def check_isolated(harness, fn, pipelines) -> list:
    """`harness.check` in a forked child: a pass that exits, kills its process or defeats
    its deadline is a finding (found by re-running each pipeline prefix in a fresh child),
    never a green check nor a `check` that exits with the pass's status."""
    import multiprocessing
    import time

    from agxir.text import print_function
    from fuzz.harness import Finding
    from fuzz.processes import describe_death, dies, run_in_child, stamped, unstamp

    def bound(steps: int) -> float:
        return (harness.pass_timeout + HANG_GRACE) * steps + 600

    where = multiprocessing.Array("q", 1, lock=False)
    since = multiprocessing.Array("d", 1, lock=False)

    def stuck() -> bool:
        return bool(since[0]) and time.monotonic() - since[0] > harness.pass_timeout + HANG_GRACE

    steps = sum(len(pipeline) for pipeline in pipelines)
    kind, value = run_in_child(harness.check, fn, stamped(pipelines, 0, where, since),
                               seconds=bound(steps), stuck=stuck, memory_mb=PASS_MEMORY_MB)
    if kind == "ok":
        return value
    if kind == "raised":
        raise InternalError(f"agxfuzz: internal error (a harness bug, please report): {value}")
    text = print_function(fn)
    if kind == "hung" and since[0]:
        number, step = unstamp(where[0])
        names = tuple(unit.name for unit in pipelines[number][: step + 1])
        message = (f"the pass ran longer than {harness.pass_timeout:g} s and did not stop at "
                   f"its deadline: killed after {harness.pass_timeout + HANG_GRACE:g} s")
        return [Finding(names[-1], "timeout", message, names, text, harness.input_sets[0])]
    for pipeline in pipelines:
        for length in range(1, len(pipeline) + 1):
            prefix = list(pipeline[:length])
            status = dies(lambda p=prefix: harness.check(fn, [p]), seconds=bound(length),
                          memory_mb=PASS_MEMORY_MB)
            if status is not None:
                names = tuple(step.name for step in prefix)
                oracle = "timeout" if status == "hung" else "crash"
                message = f"the pass took its process down ({describe_death(status)})"
                return [Finding(names[-1], oracle, message, names, text, harness.input_sets[0])]
    names = tuple(step.name for step in pipelines[0]) if pipelines else ()
    how = describe_death(value if kind == "died" else "hung")
    message = f"the check's process {how}; no pipeline alone does"
    return [Finding(names[-1] if names else "(input)", "crash", message, names, text)]


