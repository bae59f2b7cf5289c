"""The harness's shortcuts for long programs: a pass run memoized across pipelines (replayed
into stats and features as a fresh run), the structural no-change comparison, the garbage
collector held to young generations while a program is checked."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

import pytest

from agxir.ir import Immediate, Operand, Value, clone_function
from agxir.passes import PASSES
from agxir.structural import prints_as
from agxir.text import parse_function, print_function
from fuzz.campaign_db import features as feature
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest, registered
from oracles.inputs import random_input_sets

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """\
func @memo(u0:32, u1:ptr[256]) {
entry:
  %tid:32 = get_sr sr=thread_id
  %a:32 = iadd %tid, u0 shift=0
  %m:32 = mov %a
  %dead:32 = iadd %m, #1 shift=0
  device_store %m, u1, %tid fmt=i32 shift=0
  export %m slot=0
  stop
}
"""


def _counting(name: str, inner, calls: Counter) -> PassUnderTest:
    def run(fn):
        calls[name] += 1
        return inner(fn)

    return PassUnderTest(name, run, ("--pass", name))


def _harness() -> Harness:
    return Harness(random_input_sets(parse_function(PROGRAM), 4, 2, 1))


def test_a_shared_prefix_runs_once_and_counts_per_pipeline_step():
    calls: Counter = Counter()
    copyprop = _counting("copyprop", PASSES["copyprop"].run, calls)
    dce = _counting("dce", PASSES["dce"].run, calls)
    fn = parse_function(PROGRAM)
    harness = _harness()
    assert harness.check(fn, [[copyprop], [copyprop, dce], [dce], [copyprop, dce]]) == []
    # copyprop on the program once; dce on copyprop's output once and on the program once
    assert calls == Counter({"copyprop": 1, "dce": 2})
    assert harness.stats.pass_runs == Counter({"copyprop": 3, "dce": 3})
    assert harness.stats.pass_changes == Counter({"copyprop": 3, "dce": 3})
    hits = {rule: count for (name, rule), count in harness.stats.rule_hits.items()
            if name == "copyprop"}
    fresh = _harness()
    fresh.check(fn, [[copyprop]])
    once = {rule: count for (name, rule), count in fresh.stats.rule_hits.items()
            if name == "copyprop"}
    assert hits == {rule: 3 * count for rule, count in once.items()}
    # the replayed dce is at position 1 of a pipeline, as the first run was
    assert {feature.changed_at("dce", 0), feature.changed_at("dce", 1)} <= harness.features


def test_the_same_features_with_and_without_repeated_pipelines():
    copyprop, dce = registered("copyprop"), registered("dce")
    fn = parse_function(PROGRAM)
    once, twice = _harness(), _harness()
    once.check(fn, [[copyprop, dce]])
    twice.check(fn, [[copyprop, dce], [copyprop, dce]])
    assert once.features == twice.features
    assert twice.stats.pass_runs == Counter({name: 2 * n
                                             for name, n in once.stats.pass_runs.items()})


def test_a_pass_that_raises_is_not_memoized():
    calls: Counter = Counter()

    def boom(fn):
        raise RuntimeError("no")

    unit = _counting("boom", boom, calls)
    findings = _harness().check(parse_function(PROGRAM), [[unit], [unit]])
    assert calls["boom"] == 2
    assert [(f.oracle, f.message) for f in findings] == [("crash", "RuntimeError: no")] * 2


def test_a_lie_about_no_change_is_caught_in_every_pipeline_it_is_replayed_in():
    def sneaky(fn):
        PASSES["dce"].run(fn)
        return False

    unit = PassUnderTest("sneaky", sneaky, ("--pass", "x:sneaky"))
    findings = _harness().check(parse_function(PROGRAM), [[unit], [unit]])
    assert [f.oracle for f in findings] == ["no-change", "no-change"]
    assert findings[0].message == findings[1].message
    assert findings[0].message.startswith("reported no change but ")


def _parses(path: Path) -> bool:
    try:
        parse_function(path.read_text(), str(path))
    except Exception:  # the goldens of parse errors: nothing to clone
        return False
    return True


def _golden() -> list[str]:
    paths = [p for p in sorted((ROOT / "tests" / "golden").rglob("*.agx")) if _parses(p)]
    return [str(p) for p in paths[:: max(1, len(paths) // 25)]]


@pytest.mark.parametrize("path", _golden(), ids=lambda p: Path(p).name)
def test_a_fresh_clone_prints_as_its_original(path):
    fn = parse_function(Path(path).read_text(), path)
    text = print_function(fn)
    clone = clone_function(fn)
    assert prints_as(fn, text, clone)
    assert print_function(clone) == text


def _changes():
    def rename(fn):
        fn.blocks[0].instructions[1].dest.name = "renamed"

    def attr_type(fn):
        fn.blocks[0].instructions[1].attrs["shift"] = False  # prints False, not 0

    def sat(fn):
        fn.blocks[0].instructions[1].sat = True

    def operand(fn):
        ins = fn.blocks[0].instructions[1]
        ins.srcs[1] = Operand(Immediate(3))

    def modifier(fn):
        ins = fn.blocks[0].instructions[1]
        ins.srcs[0] = Operand(ins.srcs[0].ref, abs=True)

    def uniform_in_place(fn):  # uniforms are shared with the clone: the header tells
        fn.uniforms[0].name = "u9"

    def dropped(fn):
        del fn.blocks[0].instructions[3]

    def block_name(fn):
        fn.blocks[0].name = "start"

    return [rename, attr_type, sat, operand, modifier, uniform_in_place, dropped, block_name]


@pytest.mark.parametrize("change", _changes(), ids=lambda c: c.__name__)
def test_a_changed_clone_is_never_vouched_for(change):
    fn = parse_function(PROGRAM)
    text = print_function(fn)
    clone = clone_function(fn)
    change(clone)
    assert not prints_as(fn, text, clone)


def test_an_operand_naming_the_originals_value_is_left_to_the_texts():
    fn = parse_function(PROGRAM)
    text = print_function(fn)
    clone = clone_function(fn)
    ins = clone.blocks[0].instructions[1]
    ins.srcs[0] = Operand(fn.blocks[0].instructions[0].dest)  # the original's %tid
    assert print_function(clone) == text
    assert not prints_as(fn, text, clone)


def test_the_collector_is_whole_again_after_a_check_and_held_during_it():
    seen = []

    def look(fn):
        seen.append(gc.isenabled())
        return False

    unit = PassUnderTest("look", look, ("--pass", "x:look"))
    assert gc.isenabled()
    _harness().check(parse_function(PROGRAM), [[unit]])
    assert seen == [False] and gc.isenabled()


def test_a_clone_shares_only_what_cannot_change():
    fn = parse_function(PROGRAM)
    clone = clone_function(fn)
    for old, new in zip(fn.instructions(), clone.instructions()):
        assert old is not new and old.attrs is not new.attrs and old.srcs is not new.srcs
        if old.dest is not None:
            assert old.dest is not new.dest and (old.dest.name, old.dest.size) == (
                new.dest.name, new.dest.size)
        for a, b in zip(old.srcs, new.srcs):
            assert a == b if not isinstance(a.ref, Value) else (a.ref is not b.ref)
    defined = {id(ins.dest) for ins in clone.instructions() if ins.dest is not None}
    for ins in clone.instructions():
        for src in ins.srcs:
            if isinstance(src.ref, Value):
                assert id(src.ref) in defined  # the clone's own values
    clone.blocks[0].instructions[1].srcs[0] = Operand(Immediate(1))
    assert print_function(fn) == PROGRAM
