"""The RA checker keeps the errors of its fixpoint's last round instead of walking the blocks
once more to report: the same errors, in the same order, as that separate reporting walk,
on every default pipeline's allocations, a wrong allocator's, and allocations with
registers swapped for others (so that reads find the wrong values, in loops too)."""

import random

import pytest

from agxir.ir import Operand, Register, clone_function
from fuzz.zoo import machine_variants as wrong
from oracles.machine import ra_checker
from oracles.machine.ra_checker import Misaligned, _Checker
from tests.oracles.machine.pipeline_programs import pipeline_programs


def _with_a_reporting_walk(reference, allocated) -> list:
    """The errors as found before: the fixpoint silently, then one walk that reports."""
    try:
        checker = _Checker(reference, allocated)
    except Misaligned as error:
        return [error.error]
    outs: dict = {}
    changed = True
    while changed:
        changed = False
        for block in allocated.blocks:
            state = checker.entry(block, outs)
            if state is None:
                continue
            out = checker.transfer(block, state)
            if outs.get(block) != out:
                outs[block] = out
                changed = True
    checker.errors = []
    for block in allocated.blocks:
        state = checker.entry(block, outs)
        if state is not None:
            checker.transfer(block, state)
    return checker.errors


def _allocations() -> list:
    pairs = [(before, after) for name, before, after, _ in pipeline_programs()
             if name in ("ra", "vreg-ra", "ra-demand", "ra-occupancy")]
    for name, before, _after, _ in pipeline_programs():
        if name == "ra":
            allocated = clone_function(before)
            wrong.ra_free_at_last_use_in_loop(allocated)
            pairs.append((before, allocated))
    return pairs


def _swapped(rng: random.Random, fn):
    fn = clone_function(fn)
    for ins in fn.instructions():
        for k, src in enumerate(ins.srcs):
            if isinstance(src.ref, Register) and src.ref.half and rng.random() < 0.1:
                count = src.ref.size // 16
                half = count * rng.randrange(1, 12)
                ins.srcs[k] = Operand(Register(half, src.ref.size), src.abs, src.neg)
    return fn


def test_the_allocations_cover_loops_and_wrong_values():
    pairs = _allocations()
    assert len({id(before) for before, _ in pairs}) >= 6
    assert any(ra_checker.check_allocation(before, after) for before, after in pairs)


@pytest.mark.parametrize("seed", [None, 0, 1, 2])
def test_the_last_rounds_errors_are_the_reporting_walks(seed):
    rng = random.Random(seed)
    found = 0
    for before, after in _allocations():
        allocated = after if seed is None else _swapped(rng, after)
        errors = ra_checker.check_allocation(before, allocated)
        assert errors == _with_a_reporting_walk(before, allocated)
        found += len(errors)
    assert found or seed is None
