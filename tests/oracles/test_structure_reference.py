"""Issue 19: the reference for lower-cf's declines (`oracles.structure_reference`).

The harness counts a program lower-cf declines as unstructurable only when the reference
agrees; a decline it does not agree with is a crash finding of lower-cf. So the reference and
lower-cf must agree on every program, both ways (checked here on generated programs, on
arbitrary small graphs and on hand-written shapes), and the harness must use the reference.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.machine.lower_cf import Unstructurable, structurable
from agxir.text import parse_function, print_function
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest, registered
from fuzz.strategies import cfgs, programs
from oracles.inputs import InputSet
from oracles.structure_reference import unstructurable_reason


def cfg(spec: str):
    """A body-less function from `"b0 -> b1 b2; b1 -> b3; b2 -> b3; b3"`: a block with two
    targets branches, with one jumps, with none stops."""
    lines = ["func @cfg(u0:32) {"]
    for k, part in enumerate(p.strip() for p in spec.split(";")):
        name, _, targets = part.partition("->")
        targets = [f"b{t.strip().lstrip('b')}" for t in targets.split()]
        lines.append(f"{name.strip()}:")
        if not targets:
            lines.append("  stop")
        elif len(targets) == 1:
            lines.append(f"  jump -> {targets[0]}")
        else:
            lines.append(f"  if_icmp u0, #{k} cond=ult inv=0 -> {', '.join(targets)}")
    return parse_function("\n".join([*lines, "}"]) + "\n")


def assert_agree(fn) -> None:
    ours, theirs = unstructurable_reason(fn), structurable(fn)
    assert (ours is None) == (theirs is None), (
        f"lower-cf: {theirs or 'lowers it'}; reference: {ours or 'structurable'}\n"
        f"{print_function(fn)}")


# --- agreement on generated programs ---------------------------------------------------------


@settings(max_examples=300)
@given(cfgs(max_blocks=14, irreducible=True))
def test_agrees_with_lower_cf_on_generated_cfgs_irreducible_and_unstructured_ones_too(fn):
    assert_agree(fn)


@settings(max_examples=150)
@given(cfgs(max_blocks=24))
def test_agrees_with_lower_cf_on_larger_reducible_cfgs(fn):
    assert_agree(fn)


@settings(max_examples=60)
@given(programs(size=40))
def test_agrees_with_lower_cf_on_generated_programs(fn):
    assert_agree(fn)


def test_the_generated_cfgs_hold_each_kind_of_decline_and_structured_ones():
    """The agreement above is only worth the shapes it sees: the generator's CFGs (200, a
    fixed seed) include structurable ones, irreducible ones, unstructured if/else sides
    and loops with several exits."""
    import random

    from fuzz.generate import ChoiceSource, Features, generate_cfg, shape_function

    rng, kinds = random.Random(0), set()
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(12 * 24))
        shape = generate_cfg(ChoiceSource.from_bytes(data), Features.all_on(irreducible=True))
        reason = unstructurable_reason(shape_function(shape)) or "structurable"
        kinds.update(k for k in ("structurable", "irreducible", "is entered both",
                                 "exits to several") if k in reason)
    assert kinds == {"structurable", "irreducible", "is entered both", "exits to several"}


@st.composite
def small_graphs(draw, max_blocks: int = 7):
    """Any CFG of a few blocks: each block stops, jumps or branches to two different blocks
    anywhere (entries with predecessors, dead blocks, irreducible and unstructured shapes,
    loops exiting anywhere)."""
    n = draw(st.integers(2, max_blocks))
    parts = []
    for k in range(n):
        kind = draw(st.sampled_from(["branch", "branch", "jump", "stop"]))
        if kind == "stop":
            parts.append(f"b{k}")
        elif kind == "jump":
            parts.append(f"b{k} -> {draw(st.integers(0, n - 1))}")
        else:
            first, second = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2,
                                          unique=True))
            parts.append(f"b{k} -> {first} {second}")
    return cfg("; ".join(parts))


@settings(max_examples=400)
@given(small_graphs())
def test_agrees_with_lower_cf_on_arbitrary_small_graphs(fn):
    assert_agree(fn)


@pytest.mark.slow
@settings(max_examples=5000)
@given(small_graphs(max_blocks=9))
def test_agrees_with_lower_cf_on_many_arbitrary_graphs(fn):
    assert_agree(fn)


# --- hand-written shapes -----------------------------------------------------------------------

DECLINED = {
    "unreachable": ("b0 -> b2; b1 -> b2; b2", "block b1 is unreachable"),
    "irreducible": ("b0 -> b1 b2; b1 -> b2 b3; b2 -> b1 b3; b3", "irreducible"),
    "entry header": ("b0 -> b0 b1; b1", "entry block b0 is a loop header"),
    "never exits": ("b0 -> b1; b1 -> b2; b2 -> b1", "loop b1 never exits"),
    "two exits": ("b0 -> b1; b1 -> b2 b3; b2 -> b1 b4; b3 -> b5; b4 -> b5; b5",
                  "loop b1 exits to several blocks (b3, b4)"),
    # An inner loop that leaves its outer loop straight from its body also exits to the
    # outer latch (or header), so it has two exit targets: lower-cf and the reference both
    # name that first, and "leaves the enclosing loop" never shows on its own.
    "straight out": ("b0 -> b1; b1 -> b2; b2 -> b3 b4; b3 -> b2 b1; b4",
                     "loop b2 exits to several blocks"),
    # if (c || d) b2: b2 is entered from the then side of b0 and from inside its else side
    "short circuit": ("b0 -> b2 b1; b1 -> b2 b3; b2 -> b3; b3", "block b2 is entered both"),
    # a loop entered from inside both sides of an if, sharing the loop between them
    "shared loop": ("b0 -> b1 b2; b1 -> b1 b3; b2 -> b1 b3; b3", "is entered both"),
    # a jump into the middle of the other side of an if/else
    "cross jump": ("b0 -> b1 b2; b1 -> b3; b2 -> b4 b5; b3 -> b5; b4 -> b6; b5 -> b6; b6",
                   "is entered both"),
}


@pytest.mark.parametrize("name", DECLINED)
def test_each_reason_lower_cf_declines_for(name):
    spec, reason = DECLINED[name]
    fn = cfg(spec)
    assert reason in (unstructurable_reason(fn) or "structurable")
    assert structurable(fn) is not None


STRUCTURED = {
    "if/else": "b0 -> b1 b2; b1 -> b3; b2 -> b3; b3",
    "if without else": "b0 -> b1 b2; b1 -> b2; b2",
    "two stops": "b0 -> b1 b2; b1; b2",
    "do-while": "b0 -> b1; b1 -> b1 b2; b2",
    "top-tested": "b0 -> b1; b1 -> b2 b3; b2 -> b1; b3",
    "continue": "b0 -> b1; b1 -> b2 b5; b2 -> b3 b4; b3 -> b1; b4 -> b1; b5",
    "break in an if": "b0 -> b1; b1 -> b2 b3; b2 -> b5 b4; b3 -> b4; b4 -> b1 b5; b5",
    "nested loops": "b0 -> b1; b1 -> b2 b5; b2 -> b3; b3 -> b3 b4; b4 -> b1; b5",
    "loop in an if": "b0 -> b1 b3; b1 -> b2; b2 -> b2 b3; b3",
    "if in a loop": "b0 -> b1; b1 -> b2 b3; b2 -> b4; b3 -> b4; b4 -> b1 b5; b5",
    # the inner loop ends the outer body: its exit is the outer header (the regression
    # tests/regressions/lower_cf_inner_loop_exits_to_outer_header.agx)
    "inner loop exits to the outer header": "b0 -> b1; b1 -> b2 b3; b2 -> b2 b1; b3",
    "inner loop continues the outer": "b0 -> b1; b1 -> b2 b4; b2 -> b3; b3 -> b2 b1; b4",
    "break out of an inner loop's if": (
        "b0 -> b1; b1 -> b2 b7; b2 -> b3; b3 -> b4 b5; b4 -> b6 b5; b5 -> b2 b6; b6 -> b1; b7"),
}


@pytest.mark.parametrize("name", STRUCTURED)
def test_structured_shapes_have_no_reason(name):
    fn = cfg(STRUCTURED[name])
    assert unstructurable_reason(fn) is None
    assert structurable(fn) is None


# --- the harness judges lower-cf's declines by the reference -------------------------------------

SETS = [InputSet(2, {"u0": 1})]


def _declines_everything(fn) -> bool:
    """A lowering like the planted mutant: every program with control flow is declined."""
    if len(fn.blocks) > 1:
        raise Unstructurable("every block is a stop")
    return False


def test_a_lowering_that_declines_a_structurable_program_is_a_crash_finding():
    fn = cfg("b0 -> b1; b1")
    harness = Harness(SETS, check_liveness=False)
    timid = PassUnderTest("timid-cf", _declines_everything, ("--pass", "t:timid"))
    (finding,) = harness.check(fn, [[timid]])
    assert (finding.pass_name, finding.oracle) == ("timid-cf", "crash")
    assert "Unstructurable: every block is a stop" in finding.message
    assert harness.stats.unstructurable == 0


def test_a_genuinely_unstructurable_program_is_counted_not_a_finding():
    fn = cfg(DECLINED["short circuit"][0])
    harness = Harness(SETS, check_liveness=False)
    timid = PassUnderTest("timid-cf", _declines_everything, ("--pass", "t:timid"))
    assert harness.check(fn, [[registered("lower-cf")], [timid]]) == []
    assert harness.stats.unstructurable == 1  # once per program


def test_the_harness_asks_the_reference_not_lower_cf(monkeypatch):
    """A reference that calls everything structurable makes lower-cf's own declines
    findings: the verdict is the reference's."""
    import fuzz.harness

    # Where the harness reads the reference (it imports it at its top).
    monkeypatch.setattr(fuzz.harness, "unstructurable_reason", lambda fn: None)
    harness = Harness(SETS, check_liveness=False)
    (finding,) = harness.check(cfg(DECLINED["short circuit"][0]), [[registered("lower-cf")]])
    assert (finding.pass_name, finding.oracle) == ("lower-cf", "crash")
