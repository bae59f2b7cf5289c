"""Runs every golden `.agx` file under tests/golden against the expectations it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import DEFAULT_FUEL, CompiledFunction
from tests.golden_directives import buffer_contents, read_expectations

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.agx"))


def _without_comments(text: str) -> str:
    kept = []
    for line in text.splitlines():
        code = line.split(";", 1)[0].rstrip()
        if code:
            kept.append(code)
    return "\n".join(kept) + "\n"


def test_there_are_enough_golden_files():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_golden(path: Path):
    text = path.read_text()
    expected = read_expectations(text)
    if expected.parse_error:
        line, col, message = expected.parse_error
        with pytest.raises(ParseError) as caught:
            parse_function(text, filename=path.name)
        assert (caught.value.line, caught.value.col) == (line, col), str(caught.value)
        assert message in caught.value.message
        assert str(caught.value).startswith(f"{path.name}:{line}:{col}: ")
        return
    fn = parse_function(text, filename=path.name)
    errors = [str(error) for error in verify(fn)]
    if expected.verify_errors:
        for wanted in expected.verify_errors:
            assert any(wanted in error for error in errors), (wanted, errors)
        return
    assert errors == []
    assert print_function(fn) == _without_comments(text)
    compiled = CompiledFunction(fn)
    buffers = {u.name: u.buffer_bytes for u in fn.uniforms if u.is_buffer}
    for run in expected.runs:
        input_set = InputSet(
            run.threads,
            run.scalars,
            {name: buffer_contents(spec, buffers[name]) for name, spec in run.buffer_specs.items()},
        )
        (outcome,) = compiled.run([input_set], fuel=run.fuel or DEFAULT_FUEL)
        if run.outcome:
            kind, _, detail = run.outcome.partition(":")
            assert outcome.kind == kind.strip().replace("-", "_"), outcome
            assert detail.strip() in getattr(outcome, "reason", ""), outcome
        for slot, values in run.outputs:
            assert [thread[slot] for thread in outcome.outputs] == values
        for name, offset, data in run.memory:
            assert outcome.memory[name][offset : offset + len(data)] == data
