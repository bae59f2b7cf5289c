"""Each control-flow lowering variant of the zoo differs from `lower-cf` on a small
hand-written program, and the wave interpreter's refinement against the SSA program
catches it (the right pass agrees on the same program)."""

from pathlib import Path

import pytest

from agxir.machine.lower_cf import PASS as LOWER_CF
from agxir.text import parse_function
from fuzz.zoo.machine_cf_variants import BREAK_NESTING, ELSE_WRONG_BLOCK, MISSING_POP_EXEC
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.outcomes import first_difference

GOLDEN = Path(__file__).parents[1] / "golden" / "machine"


def _difference(pass_, golden: str) -> str | None:
    fn = parse_function((GOLDEN / f"lower_cf_{golden}.agx").read_text())
    inputs = [InputSet(8, {"u0": 100})]
    (source,) = CompiledFunction(fn).run(inputs)
    assert pass_.run(fn) and fn.level == "exec"
    (target,) = run_wave(fn, inputs, fuel=2000)
    return first_difference(source, target)


@pytest.mark.parametrize(
    ("variant", "golden", "symptom"),
    [
        # the then lanes' last active block is the condition block: the phi misses them
        (ELSE_WRONG_BLOCK, "if_without_else", "thread 0 output slot 0: input 0x0, output 0xdeadbeef"),
        # break n=2 inside two ifs: the inner if's pop wakes the lanes that broke
        (BREAK_NESTING, "nested_break", "out of fuel"),
        # no pop after the else: the then lanes never export
        (MISSING_POP_EXEC, "if_else", "thread 0 output slot 0: input 0xc8, output -"),
    ],
    ids=lambda v: getattr(v, "name", None),
)
def test_the_variant_is_caught_by_wave_refinement_where_lower_cf_agrees(variant, golden, symptom):
    assert _difference(LOWER_CF, golden) is None
    found = _difference(variant, golden)
    assert found is not None and symptom in found


def test_the_variants_change_one_thing_each():
    fn = parse_function((GOLDEN / "lower_cf_if_else.agx").read_text())
    right = parse_function((GOLDEN / "lower_cf_if_else.agx").read_text())
    LOWER_CF.run(right)
    MISSING_POP_EXEC.run(fn)
    names = [ins.name for ins in right.instructions()]
    names.remove("pop_exec")
    assert [ins.name for ins in fn.instructions()] == names
