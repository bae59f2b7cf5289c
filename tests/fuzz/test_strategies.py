"""The public Hypothesis strategies: what they draw is valid, and searching with them finds
what a pass or analysis test needs (irreducible CFGs, fusable patterns, loop phi cycles)."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from agxir.cfg import CFG, Dominators, is_reducible
from agxir.text import print_function
from agxir.verifier import verify
from fuzz.strategies import Features, cfgs, features, inputs, programs
from oracles.interp import CompiledFunction
from tests.fuzz.test_generate import (
    DELIBERATE_UB,
    has_fusable_branch,
    has_inverted_cmpsel,
    has_phi_cycle,
)

DETERMINISTIC = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SEARCH = settings(DETERMINISTIC, max_examples=3000)


def search(strategy, predicate, examples: int = 300):
    """The examples of `strategy` satisfying `predicate` among the first `examples` drawn
    (deterministically, without shrinking: `find` also shrinks, which costs seconds)."""
    found = []

    @settings(DETERMINISTIC, max_examples=examples, phases=[Phase.generate])
    @given(strategy)
    def probe(example):
        if predicate(example):
            found.append(example)

    probe()
    return found


def reducible(fn) -> bool:
    cfg = CFG(fn)
    return is_reducible(cfg, Dominators(cfg))


@settings(DETERMINISTIC, max_examples=150)
@given(programs())
def test_drawn_programs_verify(fn):
    assert verify(fn) == []
    assert reducible(fn)


@settings(DETERMINISTIC, max_examples=60)
@given(programs(size=20, irreducible=True), st.data())
def test_drawn_programs_run_without_races_or_running_out(fn, data):
    input_set = data.draw(inputs(fn))
    (outcome,) = CompiledFunction(fn).run([input_set])
    assert outcome.kind != "out_of_fuel"
    if outcome.kind == "undefined":
        assert outcome.reason in DELIBERATE_UB


@settings(DETERMINISTIC, max_examples=150)
@given(cfgs())
def test_drawn_cfgs_are_well_formed_and_reducible(fn):
    assert verify(fn) == []
    cfg = CFG(fn)
    assert len(cfg.reachable) == len(fn.blocks) <= 12
    assert reducible(fn)


def test_finds_an_irreducible_cfg_on_request():
    fn = find(cfgs(irreducible=True), lambda fn: not reducible(fn), settings=SEARCH)
    assert verify(fn) == []
    assert not reducible(fn)


def test_finds_fusable_compares_and_loop_phi_cycles():
    """Each pattern shows up in a good share of the drawn programs, not just once."""
    drawn = search(programs(size=30), lambda fn: True, examples=200)
    cmpsel = [fn for fn in drawn if has_inverted_cmpsel(fn)]
    branch = [fn for fn in drawn if has_fusable_branch(fn)]
    cycles = [fn for fn in drawn if has_phi_cycle(fn)]
    assert min(len(cmpsel), len(branch), len(cycles)) >= len(drawn) // 10, (
        len(drawn), len(cmpsel), len(branch), len(cycles))  # fmt: skip
    assert all(CFG(fn).back_edges for fn in cycles)
    assert "cond=ueq" in print_function(cmpsel[0])


def test_shrinks_a_fusable_cmpsel_to_a_few_instructions():
    fn = find(programs(size=10), has_inverted_cmpsel, settings=SEARCH)
    assert verify(fn) == []
    assert fn.instruction_count() <= 4, print_function(fn)


def test_features_shrink_towards_all_on():
    assert find(features(), lambda f: True, settings=SEARCH) == Features.all_on()
    assert find(features(irreducible=True), lambda f: True, settings=SEARCH) == Features.all_on(
        irreducible=True
    )
    # The minimal example keeps on every group the condition does not need off.
    shrunk = find(features(), lambda f: not f.floats and not f.loops, settings=SEARCH)
    assert shrunk.disabled() == ("loops", "floats")


def test_fixed_features_are_respected():
    no_floats = Features(floats=False)
    float_rows = {"fadd", "fmul", "ffma", "fmov", "fcmp", "fcmpsel", "if_fcmp"}

    @settings(DETERMINISTIC, max_examples=50)
    @given(programs(features=no_floats))
    def check(fn):
        assert not {ins.name for ins in fn.instructions()} & float_rows

    check()


def test_inputs_shrink_to_one_thread_of_zeros():
    fn = search(programs(size=30), lambda fn: len(fn.uniforms) >= 3, examples=50)[0]
    simplest = find(inputs(fn), lambda s: True, settings=SEARCH)
    assert simplest.threads == 1
    assert all(value == 0 for value in simplest.scalars.values())
    assert all(not any(data) for data in simplest.buffers.values())


@settings(DETERMINISTIC, max_examples=100)
@given(st.data())
def test_inputs_fit_their_function(data):
    fn = data.draw(programs(size=20))
    input_set = data.draw(inputs(fn))
    assert 1 <= input_set.threads <= 64
    assert set(input_set.scalars) == {u.name for u in fn.uniforms if not u.is_buffer}
    for uniform in fn.uniforms:
        if uniform.is_buffer:
            assert len(input_set.buffers[uniform.name]) == uniform.buffer_bytes


def test_programs_shrink_to_a_small_reproducer():
    fn = find(programs(size=20), lambda fn: fn.instruction_count() >= 12, settings=SEARCH)
    assert 12 <= fn.instruction_count() <= 16
