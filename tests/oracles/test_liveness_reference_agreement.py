"""The liveness reference (`oracles.liveness_reference`, live sets kept as masks) against its
second opinion, the implementation it replaced (`tests.oracles.liveness_reference_sets`, a
set per point): the same live-in, live-out, kills, per-point sets and pressure, and the same
`compare_liveness` verdict and message for the real analysis and for analyses broken in one
place (a block set, an instruction's kills, a set around one instruction, the pressure), on
every default pipeline's steps of generated programs at every level, a few hundred
generated SSA programs, and the goldens and regressions that parse."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest

from agxir.ir import Function, Value
from agxir.liveness import Liveness
from agxir.text import ParseError, parse_function, print_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles import liveness_reference as masks
from tests.oracles import liveness_reference_sets as sets
from tests.oracles.machine.pipeline_programs import default_pipelines, pipeline_steps

TESTS = Path(__file__).resolve().parent.parent
PIPELINE_PROGRAMS = 60  # generated programs run through every default pipeline
SSA_PROGRAMS = 300


@cache
def corpus() -> tuple[Function, ...]:
    """Distinct by text: each pipeline step's program (SSA, exec, vreg, machine), the
    generated SSA programs, then the goldens and regressions."""
    found: dict[str, Function] = {}
    pipelines = default_pipelines()
    config = CampaignConfig(seed=5, pipelines=pipelines)
    for index in range(PIPELINE_PROGRAMS):
        fn, _ = build_case(5, index, config)
        found.setdefault(print_function(fn), fn)
        for _step, _before, after in pipeline_steps(fn, pipelines):
            found.setdefault(print_function(after), after)
    config = CampaignConfig(seed=11, pipelines=[])
    for index in range(SSA_PROGRAMS):
        fn, _ = build_case(11, index, config)
        found.setdefault(print_function(fn), fn)
    paths = (sorted(TESTS.glob("golden/*.agx")) + sorted(TESTS.glob("golden/machine/*.agx"))
             + sorted(TESTS.glob("regressions/*.agx")))
    for path in paths:
        try:
            fn = parse_function(path.read_text(), filename=path.name)
        except ParseError:
            continue
        found.setdefault(print_function(fn), fn)
    return tuple(found.values())


def outcome(call, *args):
    """What `call` returns, or the type of what it raises (both must raise alike)."""
    try:
        return call(*args)
    except Exception as error:  # noqa: BLE001 - compared, not swallowed
        return type(error)


def values_of(fn: Function) -> list[Value]:
    seen: dict[Value, None] = {}
    for ins in fn.instructions():
        for ref in [src.ref for src in ins.srcs] + [ins.dest]:
            if isinstance(ref, Value):
                seen.setdefault(ref)
    return list(seen)


class Broken:
    """An analysis that answers what `real` answers but where a change says otherwise:
    block sets and kills as copied dicts, `after` / `before` overriding the sets around
    some instructions, `pressure` added to max_pressure."""

    def __init__(self, real: Liveness, after=None, before=None, pressure=0, kind=frozenset):
        self.live_in = {block: kind(found) for block, found in real.live_in.items()}
        self.live_out = {block: kind(found) for block, found in real.live_out.items()}
        self.kills = {ins: kind(found) for ins, found in real.kills.items()}
        self.max_pressure = real.max_pressure + pressure
        self._real, self._after, self._before, self._kind = real, after or {}, before or {}, kind

    def live_after(self, ins):
        return self._after.get(ins, self._kind(self._real.live_after(ins)))

    def live_before(self, ins):
        return self._before.get(ins, self._kind(self._real.live_before(ins)))


def broken_analyses(fn: Function, real: Liveness, rng: random.Random) -> list[tuple[str, Broken]]:
    """(what is wrong, the analysis): each wrong in one place, chosen by `rng`."""
    blocks = list(dict.fromkeys(fn.blocks))
    values = values_of(fn)
    foreign = Value("foreign", 32)

    def toggled(found: frozenset) -> frozenset:
        """`found` with a value added (one of the function's, else a foreign one) or, half
        the time when it has some, one taken away."""
        if found and rng.random() < 0.5:
            return found - {rng.choice(sorted(found, key=lambda v: v.name))}
        absent = [v for v in values if v not in found]
        return found | {rng.choice(absent) if absent else foreign}

    found = []
    block = rng.choice(blocks)
    for kind in ("live_in", "live_out"):
        wrong = Broken(real)
        sets_of = getattr(wrong, kind)
        sets_of[block] = toggled(sets_of[block])
        found.append((f"{kind}[{block.name}]", wrong))
    instructions = [ins for b in blocks for ins in b.instructions]
    if instructions:
        ins = rng.choice(instructions)
        wrong = Broken(real)
        wrong.kills[ins] = toggled(wrong.kills[ins])
        found.append(("kills", wrong))
        if real.kills[ins]:  # an analysis's kills without an entry kill nothing there
            missing = Broken(real)
            del missing.kills[ins]
            found.append(("kills left out", missing))
    body = [ins for ins in instructions if not ins.is_phi]
    if body:
        ins = rng.choice(body)
        found.append(("live after", Broken(real, after={ins: toggled(real.live_after(ins))})))
        found.append(("live after, foreign", Broken(real, after={ins: real.live_after(ins)
                                                                  | {foreign}})))
        first = next(ins for ins in block.instructions if not ins.is_phi) if any(
            not i.is_phi for i in block.instructions) else None
        if first is not None:
            found.append(("live before",
                          Broken(real, before={first: toggled(real.live_before(first))})))
    found.append(("pressure + 1", Broken(real, pressure=1)))
    found.append(("pressure - 1", Broken(real, pressure=-1)))
    found.append(("mutable sets", Broken(real, kind=set)))
    return found


def test_the_corpus_reaches_every_level():
    levels = {str(fn.level) for fn in corpus()}
    assert {"ssa", "exec", "vreg", "machine"} <= levels
    assert len(corpus()) > SSA_PROGRAMS


def test_both_references_give_the_same_sets_kills_points_and_pressure():
    for fn in corpus():
        old, new = outcome(sets.reference_liveness, fn), outcome(masks.reference_liveness, fn)
        if isinstance(old, type):
            assert new is old, print_function(fn)
            continue
        text = print_function(fn)
        assert dict(new.live_in) == old.live_in, text
        assert dict(new.live_out) == old.live_out, text
        assert dict(new.kills) == old.kills, text
        assert dict(new.at) == old.at, text
        assert new.at == old.at and len(new.at) == len(old.at), text
        assert new.max_pressure == old.max_pressure, text


@pytest.mark.parametrize("part", range(4))
def test_compare_gives_the_same_verdict_and_message_right_and_broken(part):
    reported = differing = 0
    for index, fn in enumerate(corpus()):
        if index % 4 != part:
            continue
        old_ref, new_ref = outcome(sets.reference_liveness, fn), outcome(
            masks.reference_liveness, fn)
        real = outcome(Liveness, fn)
        if isinstance(old_ref, type) or isinstance(real, type):
            continue
        text = print_function(fn)
        assert masks.compare_liveness(fn, real, new_ref) == sets.compare_liveness(
            fn, real, old_ref), text
        if index % 10 == 0:  # without a reference handed in, each makes its own
            assert masks.compare_liveness(fn, real) == sets.compare_liveness(fn, real), text
        for what, wrong in broken_analyses(fn, real, random.Random(index)):
            old = outcome(sets.compare_liveness, fn, wrong, old_ref)
            new = outcome(masks.compare_liveness, fn, wrong, new_ref)
            assert new == old, (what, text)
            differing += what != "mutable sets"
            reported += old is not None and what != "mutable sets"
            if what == "mutable sets":
                assert old is None, text
    assert differing > 100
    assert reported == differing  # each wrong analysis is caught, by both alike


def test_an_answer_that_is_no_frozenset_is_judged_as_the_set_it_stands_for():
    """A list holding a value twice sums to twice the value's bit, the bit of the value
    numbered after it: such an answer is judged as before, as the set it stands for."""
    for fn in corpus():
        ref, real = masks.reference_liveness(fn), outcome(Liveness, fn)
        if isinstance(real, type):
            continue
        for ins in (ins for ins in fn.instructions() if not ins.is_phi):
            live = real.live_after(ins)
            if len(live) == 1 and ref.values.index(next(iter(live))) > 0:
                below = ref.values[ref.values.index(next(iter(live))) - 1]
                wrong = Broken(real, after={ins: [below, below]})
                found = sets.compare_liveness(fn, wrong, sets.reference_liveness(fn))
                assert found is not None and "live after" in found
                assert masks.compare_liveness(fn, wrong, ref) == found
                return
    raise AssertionError("no point with one live value above another")
