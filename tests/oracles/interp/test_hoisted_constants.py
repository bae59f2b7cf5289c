"""Long blocks read their constants into locals first (`hoisted_constants`): the same
outcomes as reading `C[...]` at each use, on every default pipeline's programs (every block
hoisted) and on a long straight line, and short blocks are compiled as written."""

import pytest

from agxir.text import parse_function
from bench.scale import straight_line
from oracles.inputs import random_input_sets
from oracles.interp import runner
from oracles.machine import CompiledWave
from tests.oracles.machine.pipeline_programs import pipeline_programs


def _outcomes(fn, inputs):
    if str(fn.level) == "ssa":
        return runner.CompiledFunction(fn).run(inputs)
    return CompiledWave(fn).run(inputs)


def _both(monkeypatch, programs):
    """Each program's outcomes with no block hoisted, then with every block hoisted."""
    found = []
    for hoist_at in (10**9, 0):
        with monkeypatch.context() as patch:
            patch.setattr(runner, "HOIST_LINES", hoist_at)
            patch.setattr(runner, "_BLOCK_CACHE", {})
            found.append([_outcomes(fn, inputs) for fn, inputs in programs])
    return found


def test_hoisting_every_block_keeps_every_pipelines_outcomes(monkeypatch):
    programs = [(after, inputs) for _n, _b, after, inputs in pipeline_programs()]
    programs += [(before, inputs) for _n, before, _a, inputs in pipeline_programs()]
    plain, hoisted = _both(monkeypatch, programs)
    assert plain == hoisted
    assert sum(o.kind == "returned" for outcomes in plain for o in outcomes) > 100


def test_a_long_line_is_hoisted_with_the_same_outcome(monkeypatch):
    fn = parse_function(straight_line(400))
    inputs = random_input_sets(fn, 3, seed=1)
    plain, hoisted = _both(monkeypatch, [(fn, inputs)])
    assert plain == hoisted
    source = "def block(C):\n" + "    t = C[0x1] + C[0xff]\n" * 300 + "    return t"
    assert runner.hoisted_constants(source).splitlines()[1:3] == ["    c_1 = C[0x1]",
                                                                  "    c_ff = C[0xff]"]


@pytest.mark.parametrize("lines", [1, 200])
def test_short_blocks_are_compiled_as_written(lines):
    source = "def block(C):\n" + "    t = C[0x1]\n" * lines + "    return t"
    assert runner.hoisted_constants(source) == source
