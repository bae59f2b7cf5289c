"""Every reduced reproducer of a real bug, under the oracles, forever.

A file in tests/regressions replays itself in its `; RUN:` lines (`agxfuzz check` on the
inputs that showed the bug and on random ones, z3 on), which fail while the bug is there:
`lit tests/regressions` runs them, and so does this test (in-process, tests/lit_inprocess.py).
A finding's reproducer as `agxfuzz` writes it carries such lines and can be dropped in as it
is (docs/goldens.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.text import parse_function
from oracles.inputs import InputSet
from tests.lit_inprocess import run_file

FILES = sorted((Path(__file__).parent / "regressions").glob("*.agx"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_regression_stays_fixed(path: Path):
    assert "; RUN: agxfuzz check %s " in path.read_text(), "no RUN line replays it"
    run_file(path)


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
