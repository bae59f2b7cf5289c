"""The compiled core (agxir.ccore, built from agxir/ccore_src/) against its pure-Python references.

The clone (`agxir.ir.clone_reference`) and the no-change comparison
(`agxir.structural.same_body`) are the specification; the compiled ones must make the same
objects and give the same answers, on generated programs of every level (the SSA generator's,
and what the machine pipelines make of them), on the goldens and on hand-made changes. The
extension must be built in this checkout: a failed build is red here, not silently slow.
"""

from __future__ import annotations

import gc
import sys
from functools import cache
from pathlib import Path

import pytest

from agxir import structural
from agxir.ir import (
    Block,
    Function,
    Immediate,
    Instruction,
    Operand,
    Register,
    Uniform,
    Value,
    VirtualRegister,
    clone_function,
    clone_reference,
)
from agxir.machine.lower_cf import structurable
from agxir.native import CORE
from agxir.passes.registry import CONTRACTS, MACHINE_PIPELINES
from agxir.structural import prints_as, same_body
from agxir.text import parse_function, print_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case

GOLDEN = Path(__file__).parents[1] / "golden"
IR_CLASSES = (Function, Block, Instruction, Operand, Value, Uniform, Immediate, Register,
              VirtualRegister)


def test_the_extension_is_built_and_used():
    assert CORE is not None, "agxir.ccore (agxir/ccore_src/) is not built: run `pip install -e .`"
    fn = parse_function(PROGRAM)
    calls = []
    original = CORE.clone

    class Spy:
        def clone(self, f):
            calls.append(f)
            return original(f)

    import agxir.ir as ir

    saved = ir.CORE
    ir.CORE = Spy()
    try:
        clone_function(fn)
    finally:
        ir.CORE = saved
    assert calls == [fn]


# --- programs of every level ------------------------------------------------------------------


def _parses(path: Path):
    try:
        return parse_function(path.read_text(), str(path))
    except Exception:  # the goldens of parse errors
        return None


@cache
def programs(seed: int = 5, count: int = 16, goldens: bool = True) -> tuple[Function, ...]:
    """Generated SSA programs, each machine pipeline's steps on them (exec, vreg and machine
    functions), and the goldens that parse."""
    found = []
    config = CampaignConfig(seed=seed, pipelines=[])
    for index in range(count):
        fn, _inputs = build_case(seed, index, config)
        found.append(fn)
        if structurable(fn) is not None:
            continue
        for pipeline in MACHINE_PIPELINES:
            work = clone_reference(fn)
            for name in pipeline:
                try:
                    CONTRACTS[name].run(work)
                except Exception:  # an allocator that declines a bound: the pipeline ends
                    break
                found.append(clone_reference(work))
    if goldens:
        found += [fn for p in sorted(GOLDEN.rglob("*.agx")) if (fn := _parses(p)) is not None]
    return tuple(found)


def test_the_programs_cover_every_level():
    assert {str(fn.level) for fn in programs()} == {"ssa", "exec", "vreg", "machine"}
    assert any(b.logical_successors for fn in programs() for b in fn.blocks)
    assert any(ins.dests for fn in programs() for ins in fn.instructions())


# --- the clone ----------------------------------------------------------------------------------


def _index(fn: Function) -> dict[int, int]:
    """Every object the original reaches (through the IR's fields, lists and dicts), by id."""
    seen: dict[int, int] = {}
    stack = [fn]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen[id(obj)] = len(seen)
        if isinstance(obj, IR_CLASSES):
            stack += [getattr(obj, f) for f in obj.__dataclass_fields__]
        elif isinstance(obj, list):
            stack += obj
        elif isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
    return seen


def shape(fn: Function, clone: Function) -> list:
    """The clone as a list of tokens: each object it reaches is the original's (which one)
    or fresh (numbered in the order met), with its class, its attributes in their order and
    the items of its lists and dicts. Two clones of one function with the same shape are the
    same object graph: the same sharing, the same freshness, the same values."""
    old = _index(fn)
    fresh: dict[int, int] = {}
    out: list = []

    def token(obj):
        if id(obj) in old:
            return ("old", old[id(obj)])
        if isinstance(obj, int | str | float | type(None)):
            return ("=", type(obj).__name__, obj)
        if id(obj) in fresh:
            return ("seen", fresh[id(obj)])
        fresh[id(obj)] = len(fresh)
        if isinstance(obj, IR_CLASSES):
            return ("new", type(obj).__name__, [(k, token(v)) for k, v in vars(obj).items()])
        if isinstance(obj, list):
            return ("new list", [token(x) for x in obj])
        if isinstance(obj, dict):
            return ("new dict", [(token(k), token(v)) for k, v in obj.items()])
        return ("new other", type(obj).__name__, repr(obj))

    out.append(token(clone))
    return out


def freshness_errors(fn: Function, clone: Function) -> list[str]:
    """What the clone shares that must be fresh, or makes fresh that must be shared."""
    old = _index(fn)
    errors = []

    def fresh(obj, what):
        if id(obj) in old:
            errors.append(f"shared {what}: {obj!r}")

    def shared(obj, what):
        if id(obj) not in old:
            errors.append(f"fresh {what}: {obj!r}")

    fresh(clone, "function")
    fresh(clone.blocks, "block list")
    fresh(clone.notes, "notes")
    fresh(clone.uniforms, "uniform list")
    for u in clone.uniforms:
        shared(u, "uniform")
    for block in clone.blocks:
        fresh(block, "block")
        fresh(block.instructions, "instruction list")
        if block.logical_successors is not None:
            fresh(block.logical_successors, "successor list")
        for ins in block.instructions:
            fresh(ins, "instruction")
            for lst in (ins.srcs, ins.blocks, ins.dests, ins.attrs):
                fresh(lst, "list or attrs")
            shared(ins.opcode, "opcode")
            for x in [ins.dest, *ins.dests]:
                (fresh if isinstance(x, Value) else shared)(x, "destination")
            for src in ins.srcs:
                if isinstance(src.ref, Value):
                    fresh(src, "operand of a value")
                else:
                    shared(src, "operand")
                    shared(src.ref, "operand ref")
    return errors


def check_clones(every) -> None:
    for fn in every:
        text = print_function(fn)
        reference, compiled = clone_reference(fn), CORE.clone(fn)
        assert print_function(compiled) == text
        assert shape(fn, compiled) == shape(fn, reference), text
        assert freshness_errors(fn, compiled) == [], text
        assert freshness_errors(fn, reference) == []  # the checker, checked


@pytest.mark.parametrize("chunk", range(4))
def test_the_compiled_clone_is_the_reference_clone(chunk):
    assert len(programs()) > 100
    check_clones(programs()[chunk::4])


def test_a_changed_clone_leaves_the_original():
    for fn in programs()[::7]:
        text = print_function(fn)
        clone = CORE.clone(fn)
        for block in clone.blocks:
            block.name += "x"
            if block.logical_successors:
                block.logical_successors.reverse()
            for ins in block.instructions:
                ins.attrs["extra"] = 1
                ins.srcs.reverse()
                ins.blocks.append(block)
                ins.dests.append(Register(0, 16))
                if isinstance(ins.dest, Value):
                    ins.dest.name += "x"
                    ins.dest.size = 8
            block.instructions[:1] = []
        clone.blocks.reverse()
        clone.notes["x"] = 1
        clone.uniforms.clear()
        assert print_function(fn) == text


def test_the_clone_of_unusual_objects_is_the_references():
    """Off the direct path (attributes moved to a real dict, a subclass, a changed class,
    an operand that is not an Operand): what the generic attribute protocol gives."""
    fn = parse_function(PROGRAM)
    ins = fn.blocks[0].instructions[1]
    vars(ins)  # CPython moves the instance's attributes into a real dict
    vars(ins.srcs[0])
    vars(ins.dest)

    class Named(Value):
        pass

    fn.blocks[0].instructions[2].dest = Named("odd", 32)
    fn.blocks[0].instructions[3].srcs[0] = Operand(fn.blocks[0].instructions[2].dest)
    reference, compiled = clone_reference(fn), CORE.clone(fn)
    assert shape(fn, compiled) == shape(fn, reference)
    Value.marker = 1  # a class change: a new version, the places found again
    try:
        assert shape(fn, CORE.clone(fn)) == shape(fn, clone_reference(fn))
    finally:
        del Value.marker
    assert shape(fn, CORE.clone(fn)) == shape(fn, clone_reference(fn))


def test_errors_raise_and_leak_nothing():
    fn = parse_function(PROGRAM)
    clone = clone_function(fn)
    opcode = fn.blocks[0].instructions[0].opcode
    del fn.blocks[0].instructions[2].srcs  # an instruction missing a field
    gc.collect()
    before = sys.getrefcount(opcode)
    for _ in range(1000):
        with pytest.raises(AttributeError):
            CORE.clone(fn)
        with pytest.raises(AttributeError):
            CORE.same_body(fn, clone)
        with pytest.raises(AttributeError):
            same_body(fn, clone)
    gc.collect()
    assert sys.getrefcount(opcode) == before
    with pytest.raises(TypeError):
        CORE.same_body(fn)
    with pytest.raises(TypeError):
        CORE.bind(1, 2)


def test_ten_thousand_clones_and_comparisons_leak_nothing():
    fn = parse_function(PROGRAM)
    text = print_function(fn)
    shared = [fn.uniforms[0], fn.blocks[0].instructions[0].opcode, fn.level, fn.name,
              *[src for ins in fn.instructions() for src in ins.srcs
                if not isinstance(src.ref, Value)],
              *[ins.dest.name for ins in fn.instructions() if ins.dest is not None]]
    gc.collect()
    counts = [sys.getrefcount(obj) for obj in shared]
    objects = len(gc.get_objects())
    for _ in range(10_000):
        clone = CORE.clone(fn)
        assert CORE.same_body(fn, clone)
    del clone
    gc.collect()
    assert [sys.getrefcount(obj) for obj in shared] == counts
    assert len(gc.get_objects()) <= objects + 10
    assert print_function(fn) == text


# --- the no-change comparison -------------------------------------------------------------------


def both(before: Function, after: Function) -> bool:
    """same_body's answer, which the compiled one must give too."""
    want = same_body(before, after)
    assert CORE.same_body(before, after) is want, print_function(after)
    return want


def check_comparisons(every) -> dict[bool, int]:
    """How often the comparison said True and False after a pass, C and Python agreeing."""
    answers = {True: 0, False: 0}
    for fn in every:
        assert both(fn, clone_function(fn))
        for contract in CONTRACTS.values():
            if contract.takes != fn.level:
                continue
            work = clone_function(fn)
            try:
                contract.run(work)
            except Exception:  # a pass that declines this function (lower-cf, a bound)
                continue
            answers[both(fn, work)] += 1
    return answers


@pytest.mark.parametrize("chunk", range(4))
def test_the_comparison_agrees_after_every_pass(chunk):
    answers = check_comparisons(programs()[chunk::4])
    assert answers[True] > 20 and answers[False] > 20, answers


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_both_agree_on_more_programs(seed):
    every = programs(seed, 40, goldens=False)
    check_clones(every)
    answers = check_comparisons(every)
    assert answers[True] > 100 and answers[False] > 100, answers


PROGRAM = """\
func @f(u0:32, u1:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %a:32 = iadd %tid, u0 shift=1
  %b:32 = imad %a, u1, #3 shift=0
  if_icmp %b, #4 cond=ult inv=0 -> then, join
then:
  %c:32 = iadd %b, #1 shift=0
  jump -> join
join:
  %r:32 = phi [%b, entry], [%c, then]
  export %r slot=0
  stop
}
"""

MACHINE = """\
func.machine @m(u0:32) {
b0: -> b1
  r1 = get_sr sr=thread_id
  r2 = iadd r1, u0 shift=0
  r4, r5 = parallel_copy r2, r1
b1:
  export r4 slot=0
  stop
}
"""


def _changes():
    """(name, program, change): each makes a clone that prints differently or that the
    comparison may not vouch for."""

    def at(fn, k, block=0):
        return fn.blocks[block].instructions[k]

    ssa = [
        ("attr value", lambda fn: at(fn, 1).attrs.update(shift=2)),
        ("attr int to bool", lambda fn: at(fn, 1).attrs.update(shift=True)),
        ("attr dropped", lambda fn: at(fn, 1).attrs.clear()),
        ("swapped operands", lambda fn: at(fn, 1).srcs.reverse()),
        ("value renamed", lambda fn: setattr(at(fn, 1).dest, "name", "z")),
        ("value resized", lambda fn: setattr(at(fn, 1).dest, "size", 16)),
        ("block target", lambda fn: at(fn, 3).blocks.reverse()),
        ("phi block", lambda fn: at(fn, 0, 2).blocks.reverse()),
        ("extra instruction", lambda fn: fn.blocks[0].instructions.insert(
            0, Instruction(at(fn, 0).opcode, Value("n", 32), [], {"sr": "thread_id"}))),
        ("dropped instruction", lambda fn: fn.blocks[0].instructions.pop(1)),
        ("other uniform", lambda fn: at(fn, 1).srcs.__setitem__(1, Operand(Uniform("u0", 32)))),
        ("uniforms swapped", lambda fn: at(fn, 1).srcs.__setitem__(1, Operand(fn.uniforms[1]))),
        ("immediate", lambda fn: at(fn, 2).srcs.__setitem__(2, Operand(Immediate(4)))),
        ("immediate bool", lambda fn: at(fn, 2).srcs.__setitem__(2, Operand(Immediate(True)))),
        ("modifier", lambda fn: at(fn, 1).srcs.__setitem__(0, Operand(at(fn, 1).srcs[0].ref,
                                                                      neg=True))),
        ("saturate", lambda fn: setattr(at(fn, 1), "sat", True)),
        ("opcode", lambda fn: setattr(at(fn, 1), "opcode", at(fn, 2).opcode)),
        ("block renamed", lambda fn: setattr(fn.blocks[1], "name", "other")),
        ("blocks swapped", lambda fn: fn.blocks.reverse()),
        ("dest shared", lambda fn: setattr(at(fn, 1), "dest", at(fn, 0).dest)),
        ("dest a register", lambda fn: setattr(at(fn, 1), "dest", Register(2, 32))),
        ("unknown operand ref", lambda fn: at(fn, 1).srcs.__setitem__(0, Operand(object()))),
        ("successors", lambda fn: setattr(fn.blocks[0], "logical_successors", [fn.blocks[1]])),
    ]
    machine = [
        ("register", lambda fn: setattr(at(fn, 1), "dest", Register(6, 32))),
        ("register size", lambda fn: setattr(at(fn, 1), "dest", Register(4, 16))),
        ("virtual register", lambda fn: setattr(at(fn, 1), "dest", VirtualRegister(4, 32))),
        ("source register", lambda fn: at(fn, 1).srcs.__setitem__(0, Operand(Register(3, 32)))),
        ("copy dests", lambda fn: at(fn, 2).dests.reverse()),
        ("copy dest dropped", lambda fn: at(fn, 2).dests.pop()),
        ("successor", lambda fn: setattr(fn.blocks[0], "logical_successors", [fn.blocks[0]])),
        ("successors dropped", lambda fn: setattr(fn.blocks[0], "logical_successors", None)),
        ("notes", lambda fn: fn.notes.update(demand=3)),
        ("unchanged", lambda fn: None),
    ]
    return [(n, PROGRAM, c) for n, c in ssa] + [(n, MACHINE, c) for n, c in machine]


@pytest.mark.parametrize(("name", "program", "change"), _changes(), ids=lambda x: x
                         if isinstance(x, str) and "\n" not in x else "")
def test_the_comparison_agrees_on_hand_made_changes(name, program, change, monkeypatch):
    fn = parse_function(program)
    text = print_function(fn)
    clone = clone_function(fn)
    change(clone)
    answer = both(fn, clone)
    compiled = prints_as(fn, text, clone)
    monkeypatch.setattr(structural, "CORE", None)
    assert prints_as(fn, text, clone) is compiled
    if name == "unchanged":
        assert answer and compiled
    else:
        assert not compiled
