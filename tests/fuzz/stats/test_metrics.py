"""What `agxfuzz stats` measures of one program: hand-counted values on hand-written
programs, and the shared compilation (`fuzz.stats.sharing`) equal to compiling each
pipeline on its own."""

from pathlib import Path

import pytest

from agxir.text import parse_function
from fuzz.generate import ChoiceSource, Features, generate_program
from fuzz.generate.cases import program_seed
from fuzz.stats.comparisons import COMPARISONS, pipeline
from fuzz.stats.metrics import CompileFailed, Metrics, compile_and_measure, vreg_pressure
from fuzz.stats.sharing import measure_all

TESTS = Path(__file__).resolve().parents[2]
SELECT = (TESTS / "data" / "stats" / "select_worst_case.agx").read_text()
SWAP = TESTS / "golden" / "phi_swap_parallel.agx"


def test_heuristic_1_leaves_the_select_alone_at_lower_pressure():
    fn = parse_function(SELECT)
    # a, b, t, c, d, r, export, stop. Mesa's demand (late kill): a 2, b 4, t 4+1 then a
    # and b freed: 1, c 3, d 5, r 5+2 = 7. The allocator (early kill) puts a, b in r0, r1,
    # t in r0l, c, d in r1, r2: halves 0..5, so 6 halfregs.
    got = compile_and_measure(fn, pipeline("cmpsel-uniform-compare").passes)
    assert got == Metrics(instrs=8, halfregs=6, threads=1024, copies=0, pressure=7)


def test_heuristic_4_fuses_and_pays_in_pressure():
    fn = parse_function(SELECT)
    # The select reads a, b, c, d; dce drops the compare: 7 instructions. a, b, c, d live
    # together (8 halves) and r defined while they are (late kill): 10; r0..r3: 8 halfregs.
    got = compile_and_measure(fn, pipeline("cmpsel").passes)
    assert got == Metrics(instrs=7, halfregs=8, threads=1024, copies=0, pressure=10)


def test_copies_and_the_reserved_exec_half_are_counted():
    fn = parse_function(SWAP.read_text())
    # The loop swaps a and b: the phi copy is a swap, three xors. Pressure: r0l reserved
    # (1) + a, b, n (6) + n2 (2) while n is freed only after the add = 9; r3 is the highest
    # register (halves 6 and 7), so 8 halfregs; 10 instructions + the 3 xors + jmp = 14.
    got = compile_and_measure(fn, pipeline("cmpsel").passes)
    assert got == Metrics(instrs=14, halfregs=8, threads=1024, copies=3, pressure=9)


def test_vreg_pressure_counts_live_virtual_registers_early_kill():
    fn = parse_function(SELECT)
    steps = pipeline("cmpsel", route="vreg").passes
    names = [p.name for p in steps]
    work = fn
    for step in steps[: names.index("vreg-ra")]:
        step.run(work)
    assert work.level == "vreg"
    # After fusion the select reads v1..v4 (32-bit each): 8 halves live before it.
    assert vreg_pressure(work) == 8
    assert compile_and_measure(parse_function(SELECT), steps).pressure == 8


def test_a_pass_that_raises_is_the_programs_failure_not_the_runs():
    from agxir.passes.pass_ import Pass

    def broken(fn):
        raise RuntimeError("no")

    steps = (Pass("broken", "raises", broken), *pipeline("cmpsel").passes)
    with pytest.raises(CompileFailed, match="broken: RuntimeError: no"):
        compile_and_measure(parse_function(SELECT), steps)
    result = measure_all(parse_function(SELECT), {"x": steps})
    assert result == {"x": "broken: RuntimeError: no"}


def test_a_pipeline_without_an_allocator_is_refused():
    with pytest.raises(CompileFailed, match="without a register allocator"):
        compile_and_measure(parse_function(SELECT), pipeline("cmpsel").passes[:4])


def test_sharing_work_gives_each_pipelines_own_result():
    pipelines = {}
    for comparison in COMPARISONS:
        for side in (comparison.before, comparison.after):
            pipelines[side.key] = side.passes
    differing = 0
    for index in range(12):
        source = ChoiceSource.from_seed(program_seed(7, index))
        fn = generate_program(source, Features.from_source(source), size=40)
        shared = measure_all(fn, pipelines)
        alone = {}
        for key, passes in pipelines.items():
            try:
                alone[key] = compile_and_measure(fn, passes)
            except CompileFailed as failure:
                alone[key] = failure.reason
        assert shared == alone
        differing += len(set(alone.values())) > 1
    assert differing > 0  # the pipelines are not all alike on these programs
