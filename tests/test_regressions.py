"""Every reduced reproducer of a real bug, under the oracles, forever.

A file in tests/regressions keeps its pipeline (`; PASSES: a,b`) and the scalar inputs that
showed the bug (`; SCALARS: u0=...`) in comments; the check runs those inputs plus random
ones, with the z3 oracles on, and must find nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agxir.text import parse_function
from fuzz.harness import Harness
from fuzz.passes_under_test import registered
from oracles.inputs import InputSet, random_input_sets

FILES = sorted((Path(__file__).parent / "regressions").glob("*.agx"))


def directive(text: str, key: str) -> str:
    match = re.search(rf"^;\s*{key}:\s*(.+)$", text, re.MULTILINE)
    assert match, f"missing ; {key}:"
    return match.group(1).strip()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_regression_stays_fixed(path: Path):
    text = path.read_text()
    fn = parse_function(text, filename=path.name)
    pipeline = [registered(name) for name in directive(text, "PASSES").split(",")]
    scalars = {
        name: int(value, 0)
        for name, value in (item.split("=") for item in directive(text, "SCALARS").split())
    }
    sets = [InputSet(4, scalars)] + random_input_sets(fn, 4, seed=1, count=4)
    assert Harness(sets, tv_threads=4).check(fn, [pipeline]) == []


def test_the_shift_wrap_input_exercises_the_bug():
    """address_cleanup_shift_wrap.agx's input really makes the wrong rewrite misbehave:
    amul(u0, #48) is undefined on it while the original program is not."""
    from oracles.interp import CompiledFunction

    wrong = parse_function(
        "func @f(u0:32) {\nb0:\n  %m:32 = amul u0, #48\n  export %m slot=0\n  stop\n}\n"
    )
    (outcome,) = CompiledFunction(wrong).run([InputSet(1, {"u0": 0x10000001})])
    assert outcome.kind == "undefined"
    original = Path(__file__).parent / "regressions" / "address_cleanup_shift_wrap.agx"
    (good,) = CompiledFunction(parse_function(original.read_text())).run(
        [InputSet(1, {"u0": 0x10000001})]
    )
    assert good.outputs == ((0x30,),)
