"""The Mesa goldens (tests/golden/mesa/): Mesa's own unit-test cases (test-optimizer.cpp,
test-lower-parallel-copy.cpp) that the text form can say, through the real passes, with
Mesa's expectation as the CHECK lines; each names the model's golden for the same case."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lit_inprocess import run_file

ROOT = Path(__file__).resolve().parents[3]
MESA_GOLDENS = sorted((ROOT / "tests" / "golden" / "mesa").glob("*.agx"))


def test_there_are_mesa_goldens():
    assert len(MESA_GOLDENS) >= 21


@pytest.mark.parametrize("path", MESA_GOLDENS, ids=lambda p: p.name)
def test_mesa_golden(path: Path):
    text = path.read_text()
    model = text.split("model's golden for the same case: ")[1].split(".agx")[0] + ".agx"
    assert (ROOT / model).is_file(), model
    run_file(path)
