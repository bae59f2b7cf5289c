"""The cache of emitted blocks (oracles/interp/emit_cache.py) in the SSA interpreter: built
with the cache warm, a function's interpreter has the code, constants and blocks fresh
emission gives it, and runs to the same outcomes, on the SSA programs the default pipelines
make of generated programs and on the goldens; blocks whose instructions print alike but
whose emission reads something else differently (a phi's source numbering, whether a value
is stored for other blocks, a source's width) are not confused; and a pipeline's steps hit.
The constructor's one walk over the function gives what separate walks gave."""

from __future__ import annotations

from functools import cache

import pytest

from agxir.ir import SSA, Value
from agxir.text import format_instruction, parse_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import InputSet, random_input_sets
from oracles.interp import CompiledFunction, emit_cache
from tests.oracles.interp.test_vm import golden_programs
from tests.oracles.machine.pipeline_programs import default_pipelines, pipeline_steps

GENERATED = 8
FUEL = 3000


@cache
def ssa_corpus() -> tuple:
    """(fn, input sets): generated programs and every SSA step the default pipelines make of
    them, in the order the harness meets them, then the goldens."""
    pipelines = default_pipelines()
    config = CampaignConfig(seed=21, pipelines=pipelines)
    found = []
    for index in range(GENERATED):
        fn, inputs = build_case(21, index, config)
        found.append((fn, inputs[:2]))
        found += [(after, inputs[:2]) for _, _, after in pipeline_steps(fn, pipelines)
                  if after.level == SSA]
    for fn in golden_programs(SSA):
        found.append((fn, random_input_sets(fn, 32, seed=1, count=2)))
    return tuple(found)


@pytest.fixture
def cold_cache(monkeypatch):
    """The cache on and empty; the test's entries are dropped afterwards."""
    monkeypatch.setattr(emit_cache, "enabled", True)
    emit_cache.SSA_BLOCKS.clear()
    yield emit_cache.SSA_BLOCKS
    emit_cache.SSA_BLOCKS.clear()


def fresh(fn) -> CompiledFunction:
    """`fn`'s interpreter with every block emitted afresh."""
    was = emit_cache.enabled
    emit_cache.enabled = False
    try:
        return CompiledFunction(fn)
    finally:
        emit_cache.enabled = was


def built(compiled: CompiledFunction) -> tuple:
    """Everything emission decides of an interpreter."""
    blocks = [(b.block.name, b.number, b.length, b.targets, b.acyclic) for b in compiled.blocks]
    return compiled.source, compiled.constants, blocks, compiled.backend


def test_warm_builds_are_fresh_builds_and_run_alike(cold_cache):
    corpus = ssa_corpus()
    expected = [built(fresh(fn)) for fn, _ in corpus]
    first = [CompiledFunction(fn) for fn, _ in corpus]
    assert [built(c) for c in first] == expected
    misses, blocks = cold_cache.misses, sum(len(c.blocks) for c in first)
    assert cold_cache.hits + misses == blocks
    warm = [CompiledFunction(fn) for fn, _ in corpus]  # every block a hit now
    assert cold_cache.misses == misses and cold_cache.hits == 2 * blocks - misses
    assert [built(c) for c in warm] == expected
    kinds = set()
    for (fn, inputs), compiled in zip(corpus, warm, strict=True):
        reference = fresh(fn)
        outcomes = compiled.run(inputs, FUEL)
        assert outcomes == reference.run(inputs, FUEL)
        assert (compiled.lane_instructions, compiled.diverged, compiled.set_steps) == (
            reference.lane_instructions, reference.diverged, reference.set_steps)
        kinds |= {o.kind for o in outcomes}
    assert {"returned", "undefined"} <= kinds


def test_a_pipelines_steps_hit(cold_cache):
    """Passes change few blocks: most blocks of the steps of the default pipelines come
    from the cache (89% on this corpus)."""
    for fn, _ in ssa_corpus()[: len(ssa_corpus()) - len(golden_programs(SSA))]:
        CompiledFunction(fn)
    assert cold_cache.hits >= 4 * cold_cache.misses


# --- what the key must separate ---------------------------------------------------------------
JOIN = """func @f(u0:32) {{
entry:
  %tid:32 = get_sr sr=thread_id
  if_icmp %tid, #2 cond=ult inv=0 -> a, b
{first}
{second}
join:
  %p:32 = phi [%x, a], [%y, b]
  export %p slot=0
  stop
}}
"""
A = "a:\n  %x:32 = mov_imm value=0x1\n  jump -> join"
B = "b:\n  %y:32 = mov_imm value=0x2\n  jump -> join"

# %x is read in `next` only in the first; in the second its block's text is the same.
ESCAPING = """func @f(u0:32) {{
entry:
  %x:32 = iadd u0, #1 shift=0
  %z:32 = iadd %x, #1 shift=0
  export %z slot=1
  jump -> next
next:
  export {read} slot=0
  stop
}}
"""

# The same `next` text, reading %x of 16 bits (sign-extended) or 32.
WIDTH = """func @f(u0:32) {{
entry:
  %x:{size} = mov_imm value=0xffff
  jump -> next
next:
  %y:32 = iadd %x, #1 shift=0
  export %y slot=0
  stop
}}
"""

PAIRS = {
    "phi source numbering": (JOIN.format(first=A, second=B), JOIN.format(first=B, second=A), "join"),
    "escaping destination": (ESCAPING.format(read="%x"), ESCAPING.format(read="u0"), "entry"),
    "source width": (WIDTH.format(size=16), WIDTH.format(size=32), "next"),
}


def _block_source(compiled: CompiledFunction, name: str) -> str:
    position = [block.name for block in compiled.order].index(name)
    return compiled.source.split("\n\n")[position]


def _texts(fn, name: str) -> list[str]:
    return [format_instruction(ins) for ins in fn.block_named(name).instructions]


@pytest.mark.parametrize("pair", list(PAIRS))
def test_blocks_that_print_alike_but_emit_differently_are_not_confused(pair, cold_cache):
    first_text, second_text, name = PAIRS[pair]
    first, second = parse_function(first_text), parse_function(second_text)
    assert _texts(first, name) == _texts(second, name)
    inputs = [InputSet(threads=4, scalars={"u0": 7})]
    sources = []
    for fn in (first, second, first, second):  # the second round from the cache
        compiled, reference = CompiledFunction(fn), fresh(fn)
        assert built(compiled) == built(reference)
        assert compiled.run(inputs, FUEL) == reference.run(inputs, FUEL)
        sources.append(_block_source(compiled, name))
    assert sources[0] != sources[1]
    assert sources[:2] == sources[2:]
    assert cold_cache.hits > 0


def test_a_name_standing_for_two_values_is_emitted_afresh(cold_cache):
    """The emitter keeps values by object within a block: a function where one name stands
    for two objects gets no key (so neither reads nor fills the cache)."""
    fn = parse_function(WIDTH.format(size=32))
    add = fn.block_named("next").instructions[0]
    twin = type(add.srcs[0].ref)("x", 32)
    add.srcs[0] = add.srcs[0].with_ref(twin)
    assert built(CompiledFunction(fn)) == built(fresh(fn))
    assert cold_cache.hits == cold_cache.misses == 0


def _separate_walks(fn) -> tuple:
    """The value names, output slots, values read outside their block and ballot flag, as
    the constructor found them before it walked the function once."""
    home = {ins.dest: block for block in fn.blocks for ins in block.instructions if ins.dest}
    escaping = set()
    for block in fn.blocks:
        for ins in block.instructions:
            for value in ins.uses():
                if ins.is_phi or home.get(value) is not block:
                    escaping.add(value)
    slots = 1 + max((ins.attrs["slot"] for ins in fn.instructions() if ins.name == "export"),
                    default=-1)
    names = [ins.dest.name for ins in fn.instructions() if isinstance(ins.dest, Value)]
    return names, slots, escaping, any(ins.opcode.wave for ins in fn.instructions())


def test_one_walk_finds_what_separate_walks_found():
    found = set()
    for fn, _ in ssa_corpus():
        compiled = CompiledFunction(fn)
        walked = (compiled.value_names, compiled.output_slots, compiled.escaping,
                  compiled.tracks_divergence)
        assert walked == _separate_walks(fn)
        found.add(compiled.tracks_divergence)
    assert found == {True, False}
