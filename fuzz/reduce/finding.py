"""A campaign's finding, reduced and classified: the reducer run on the program it was
found on (`reduce_finding`), and the shape that makes two findings one bug
(`change_shape`, `reproducer_shape`). `fuzz.campaign` runs each in a forked child, since
they re-run the pass under test."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from agxir.ir import Function, clone_function
from agxir.text import ParseError, format_instruction, parse_function, print_function
from fuzz.harness import Finding
from fuzz.passes_under_test import PassUnderTest
from fuzz.processes import pass_memory_limit
from fuzz.reduce.deltas import Case
from fuzz.reduce.reducer import Reducer, SameFailure
from oracles.inputs import InputSet


def reduce_finding(finding: Finding, fn: Function, inputs: Sequence[InputSet],
                   units: Mapping[str, PassUnderTest], *, harness_options: dict,
                   attempts: int | None, seconds: float, memory_mb: int | None,
                   supervised: bool = False) -> Finding:
    """The finding, shrunk by the reducer within `attempts` candidates (and `seconds`, a
    backstop) to a program that fails the same way (same pass, oracle and signature);
    `supervised`: each candidate is checked in a child of its own (the finding took its
    process down), under `memory_mb`. `units`: the passes of the finding's pipeline, by
    name."""
    pipeline = tuple(units[name] for name in finding.pipeline)
    options = dict(harness_options)
    test = SameFailure(finding, pass_timeout=options.pop("pass_timeout"), harness_options=options,
                       memory_mb=memory_mb, supervised=supervised)
    reducer = Reducer(Case(fn, tuple(inputs), pipeline), test, seconds=seconds,
                      attempts=attempts)
    best = reducer.run()
    reduced = reducer.finding
    if reduced is None:  # could not reproduce in a fresh harness: keep the original
        return finding
    return Finding(
        reduced.pass_name,
        reduced.oracle,
        reduced.message,
        tuple(unit.name for unit in best.pipeline),
        print_function(best.fn),
        reduced.input_set,
    )


def change_shape(finding: Finding, units: Mapping[str, PassUnderTest]) -> tuple:
    """What the failing pass did to the reproducer: the opcodes it removed and added (what
    its wrong rule rewrote), or, when that cannot be seen, the reproducer's shape."""
    try:
        fn = parse_function(finding.program)
        with pass_memory_limit():
            for name in finding.pipeline[:-1]:
                units[name].run(fn)
        before = Counter(ins.name for ins in fn.instructions())
        after_fn = clone_function(fn)
        with pass_memory_limit():
            units[finding.pipeline[-1]].run(after_fn)
        after = Counter(ins.name for ins in after_fn.instructions())
    except (ParseError, KeyError, Exception, SystemExit):
        return reproducer_shape(finding.program)
    change = (tuple(sorted((before - after).items())), tuple(sorted((after - before).items())))
    if change != ((), ()):
        return change
    rewritten = tuple(sorted({  # rewritten in place: operands, flags
        a.name for a, b in zip(fn.instructions(), after_fn.instructions(), strict=False)
        if format_instruction(a) != format_instruction(b)
    }))
    return ("in place", rewritten) if rewritten else reproducer_shape(finding.program)


def reproducer_shape(program: str) -> tuple:
    """The opcodes of each block, in order: what one bug's reduced reproducers share."""
    try:
        fn = parse_function(program)
    except ParseError:
        return (program,)
    return tuple(tuple(ins.name for ins in block.instructions) for block in fn.blocks)
