"""The cache of emitted units (oracles/interp/emit_cache.py) in the wave interpreter: built
with the cache warm, a function's interpreter has the code, constants, branches and stops
fresh emission gives it, and runs to the same outcomes, with writes forwarded or not, on
the exec, vreg and machine programs the default pipelines make of generated programs and
on the goldens; units whose instructions print alike but whose emission reads something
else differently (a phi's source numbering, a wave branch's target unit, a virtual
register's widest access, the names only the unit uses) are not confused; and a
pipeline's steps hit. The constructor's one walk over the function gives what separate
walks gave."""

from __future__ import annotations

from functools import cache

import pytest

from agxir.ir import Value, VirtualRegister
from agxir.text import format_instruction, parse_function
from oracles.inputs import InputSet, random_input_sets
from oracles.interp import emit_cache
from oracles.machine import CompiledWave
from tests.oracles.interp.test_vm import golden_programs
from tests.oracles.machine.pipeline_programs import pipeline_programs

FUEL = 3000


@cache
def wave_corpus() -> tuple:
    """(fn, input sets): what every default pipeline's steps below SSA make of generated
    programs, in the order the harness meets them, then the goldens below SSA."""
    found = [(after, inputs) for _, _, after, inputs in pipeline_programs()]
    for fn in golden_programs("machine"):
        found.append((fn, random_input_sets(fn, 32, seed=1, count=2)))
    return tuple(found)


@pytest.fixture
def cold_cache(monkeypatch):
    """The cache on and empty; the test's entries are dropped afterwards."""
    monkeypatch.setattr(emit_cache, "enabled", True)
    emit_cache.WAVE_UNITS.clear()
    yield emit_cache.WAVE_UNITS
    emit_cache.WAVE_UNITS.clear()


def fresh(fn, forward: bool = True) -> CompiledWave:
    """`fn`'s interpreter with every unit emitted afresh."""
    was = emit_cache.enabled
    emit_cache.enabled = False
    try:
        return CompiledWave(fn, forward)
    finally:
        emit_cache.enabled = was


def built(compiled: CompiledWave) -> tuple:
    """Everything emission decides of an interpreter."""
    blocks = [(b.length, b.branch, b.stops) for b in compiled.blocks]
    return compiled.sources, compiled.constants, blocks, compiled.backend


@pytest.mark.parametrize("forward", [True, False])
def test_warm_builds_are_fresh_builds_and_run_alike(forward, cold_cache):
    corpus = wave_corpus()
    expected = [built(fresh(fn, forward)) for fn, _ in corpus]
    first = [CompiledWave(fn, forward) for fn, _ in corpus]
    assert [built(c) for c in first] == expected
    misses, units = cold_cache.misses, sum(len(c.blocks) for c in first)
    assert cold_cache.hits + misses == units
    warm = [CompiledWave(fn, forward) for fn, _ in corpus]  # every unit a hit now
    assert cold_cache.misses == misses and cold_cache.hits == 2 * units - misses
    assert [built(c) for c in warm] == expected
    kinds = set()
    for (fn, inputs), compiled in zip(corpus, warm, strict=True):
        reference = fresh(fn, forward)
        outcomes = compiled.run(inputs, FUEL)
        assert outcomes == reference.run(inputs, FUEL)
        assert (compiled.lane_instructions, compiled.set_steps) == (
            reference.lane_instructions, reference.set_steps)
        kinds |= {o.kind for o in outcomes}
    assert "returned" in kinds


def test_the_levels_print_faithfully():
    """The key's text of an instruction (the compiled printer's) is the reference
    printer's on every instruction of the corpus: registers, virtual registers with their
    sizes, modifiers, attributes, several destinations."""
    from agxir.text.printer import format_instruction_reference

    levels = set()
    for fn, _ in wave_corpus():
        levels.add(str(fn.level))
        for ins in fn.instructions():
            assert format_instruction(ins) == format_instruction_reference(ins)
    assert levels == {"exec", "vreg", "machine"}


def test_a_pipelines_steps_hit(cold_cache):
    """Passes change few units: most units of the steps below SSA of the default
    pipelines come from the cache (84% on this corpus)."""
    for fn, _ in wave_corpus()[: len(wave_corpus()) - len(golden_programs("machine"))]:
        CompiledWave(fn)
    assert cold_cache.hits >= 4 * cold_cache.misses


def test_forwarded_and_direct_units_are_not_confused(cold_cache):
    """The same units emitted with writes forwarded and without share no entry."""
    corpus = wave_corpus()[:60]
    for fn, _ in corpus:
        CompiledWave(fn, forward=True)
    for fn, _ in corpus:
        assert built(CompiledWave(fn, forward=False)) == built(fresh(fn, forward=False))


# --- what the key must separate ---------------------------------------------------------------
# Every lane passes both blocks: the phi takes the source of the one laid out last.
PHI = """func.exec @f() {{
{first}
{second}
join:
  %p:32 = phi [%x, a], [%y, b]
  export %p slot=0
  stop
}}
"""
A = "a:\n  %x:32 = mov_imm value=0x1"
B = "b:\n  %y:32 = mov_imm value=0x2"

# The branch in `e` is never taken; `t` is unit 2, or unit 3 when `m` has a branch too.
TARGET = """func.exec @f() {{
e:
  %x:32 = mov_imm value=0x1
  jmp_exec_none -> t
m:
{extra}  export %x slot=1
t:
  export %x slot=0
  stop
}}
"""

# v1 is written at 32 bits (then v1:16 reads its low half) or at 16 only.
WIDTH = """func.vreg @f() {{
b0:
  v1:{size} = mov_imm value={value}
b1:
  v2:32 = iadd v1:16, #1 shift=0
  export v2:32 slot=0
  stop
}}
"""

# %x is read by another unit in the first, so `b0` must store it; in the second only b0
# uses it.
LOCAL = """func.exec @f(u0:32) {{
b0:
  %x:32 = iadd u0, #1 shift=0
  export %x slot=0
b1:
  export {read} slot=1
  stop
}}
"""

PAIRS = {
    "phi source numbering": (PHI.format(first=A, second=B), PHI.format(first=B, second=A), 2),
    "wave branch target": (TARGET.format(extra=""), TARGET.format(extra="  jmp_exec_none -> t\n"), 0),
    "vreg width": (WIDTH.format(size=32, value="0x12348765"), WIDTH.format(size=16, value="0x8765"), 1),
    "unit locals": (LOCAL.format(read="%x"), LOCAL.format(read="u0"), 0),
}


def _unit_texts(compiled: CompiledWave, unit: int) -> list[str]:
    """The instructions of unit `unit` (units here are whole blocks, or end at a branch)."""
    texts = []
    for block in compiled.fn.blocks:
        for ins in block.instructions:
            texts.append(format_instruction(ins))
            if ins.name in ("jmp_exec_any", "jmp_exec_none"):
                texts.append(None)
        texts.append(None)
    units = [[]]
    for text in texts:
        if text is None:
            units.append([])
        else:
            units[-1].append(text)
    return units[unit]


@pytest.mark.parametrize("pair", list(PAIRS))
def test_units_that_print_alike_but_emit_differently_are_not_confused(pair, cold_cache):
    first_text, second_text, unit = PAIRS[pair]
    first, second = parse_function(first_text), parse_function(second_text)
    inputs = [InputSet(threads=4, scalars={"u0": 7} if first.uniforms else {})]
    sources = []
    for fn in (first, second, first, second):  # the second round from the cache
        compiled, reference = CompiledWave(fn), fresh(fn)
        assert built(compiled) == built(reference)
        assert compiled.run(inputs, FUEL) == reference.run(inputs, FUEL)
        sources.append((compiled.sources[unit], compiled.blocks[unit].branch))
    assert _unit_texts(CompiledWave(first), unit) == _unit_texts(CompiledWave(second), unit)
    assert sources[0] != sources[1]
    assert sources[:2] == sources[2:]
    assert cold_cache.hits > 0


def _separate_walks(fn) -> tuple:
    """The V names, output slots and units' lengths, as the constructor found them before
    it walked the function once."""
    names, slots = set(), 0
    for ins in fn.instructions():
        for ref in [s.ref for s in ins.srcs] + ins.defs():
            if isinstance(ref, Value | VirtualRegister):
                names.add(ref.name)
        if ins.opcode.name == "export":
            slots = max(slots, ins.attrs["slot"] + 1)
    lengths = []
    for block in fn.blocks:
        current, first = 0, True
        for ins in block.instructions:
            current += 1
            if ins.name in ("jmp_exec_any", "jmp_exec_none"):
                lengths.append(current)
                current, first = 0, False
        if current or first:
            lengths.append(current)
    return sorted(names), slots, lengths


def test_one_walk_finds_what_separate_walks_found():
    for fn, _ in wave_corpus():
        compiled = CompiledWave(fn)
        lengths = [block.length for block in compiled.blocks]
        assert (compiled.names, compiled.output_slots, lengths) == _separate_walks(fn)
