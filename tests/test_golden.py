"""Runs every golden `.agx` file under tests/golden (and tests/golden/machine) against the
expectations it holds. Exec, vreg and machine files run on the wave interpreter; PASS names
machine passes as well as SSA ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.ir import clone_function
from agxir.liveness import Liveness
from agxir.machine.pipeline import MACHINE_PASSES
from agxir.passes import PASSES, get_pass
from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import DEFAULT_FUEL, CompiledFunction
from oracles.liveness_reference import reference_liveness
from oracles.machine import CompiledWave
from tests.golden_directives import buffer_contents, read_expectations

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.agx")) + sorted((GOLDEN / "machine").glob("*.agx"))


def _without_comments(text: str) -> str:
    kept = []
    for line in text.splitlines():
        code = line.split(";", 1)[0].rstrip()
        if code:
            kept.append(code)
    return "\n".join(kept) + "\n"


def test_there_are_enough_golden_files():
    assert len(FILES) >= 20


def _check_liveness(fn, expected) -> None:
    """LIVE-IN/LIVE-OUT/MAX-PRESSURE hold for the analysis and for the reference alike."""

    def names(values) -> frozenset[str]:
        return frozenset(value.name for value in values)

    for who, found in (("agxir.liveness", Liveness(fn)), ("reference", reference_liveness(fn))):
        for kind, sets, wanted in (
            ("live_in", found.live_in, expected.live_in),
            ("live_out", found.live_out, expected.live_out),
        ):
            for block_name, values in wanted:
                got = names(sets[fn.block_named(block_name)])
                assert got == values, (
                    f"{who} {kind}[{block_name}]: {sorted(got)} != {sorted(values)}"
                )
        if expected.max_pressure is not None:
            assert found.max_pressure == expected.max_pressure, (who, found.max_pressure)


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
    if expected.has_liveness:
        _check_liveness(fn, expected)
    _check_runs(fn, expected.runs)
    if expected.passes:
        _check_passes(fn, expected)


def _check_runs(fn, runs, returned_only: bool = False) -> None:
    compiled = CompiledFunction(fn) if fn.level == "ssa" else CompiledWave(fn)
    buffers = {u.name: u.buffer_bytes for u in fn.uniforms if u.is_buffer}
    for run in runs:
        if returned_only and run.outcome and not run.outcome.startswith("returned"):
            continue
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


def _pass(name: str):
    """A PASS name: an SSA pass (agxir.passes.PASSES), else a machine-level one."""
    if name in PASSES:
        return get_pass(name)
    assert name in MACHINE_PASSES, f"PASS {name}: neither an SSA nor a machine-level pass"
    return MACHINE_PASSES[name]


def _check_passes(fn, expected) -> None:
    """PASS/EXPECT/EXPECT-UNCHANGED: the passes' result verifies, matches the expected lines
    and still gives every returned run's expected outputs."""
    before = print_function(fn)
    after = clone_function(fn)
    changes = [(name, _pass(name).run(after)) for name in expected.passes]
    assert [str(error) for error in verify(after)] == []
    printed = print_function(after)
    if expected.expect_unchanged:
        assert not any(changed for _, changed in changes), changes
        assert printed == before
    if expected.expect:
        assert any(changed for _, changed in changes), changes
        lines = [line.strip() for line in printed.splitlines()]
        at = 0
        for wanted in expected.expect:
            assert wanted in lines[at:], f"EXPECT {wanted!r} not found in order in:\n{printed}"
            at = lines.index(wanted, at) + 1
    _check_runs(after, expected.runs, returned_only=True)
