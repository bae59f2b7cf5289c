"""The compiled printer (agxir/ccore_src/print.c) against the Python references: the same
text for every golden, for generated programs and every function the default pipelines make
of them at every level, and for hand-made instructions of every opcode row of every level
with odd operands, attributes and names; the reference's own text or error wherever the C
hands an instruction or a function back; no leaks.

Where the C spells an instruction itself and where it asks the reference is counted (a
counting reference is bound for the test), so the agreement on ordinary IR is the C's own.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import math
import sys
from functools import cache
from pathlib import Path

import pytest

from agxir import ir
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
    clone_reference,
)
from agxir.machine.opcodes import opcodes_for_level
from agxir.machine.text import print_machine_function_reference
from agxir.native import CORE
from agxir.opcodes import spec
from agxir.opcodes.operands import minifloat_value
from agxir.opcodes.table import OPCODES
from agxir.text import parse_function, print_function, printer
from agxir.text.printer import format_instruction_reference, print_ssa_function_reference
from fuzz.campaign import CampaignConfig
from fuzz.commands.units import units_under_test
from fuzz.generate.cases import build_case

pytestmark = pytest.mark.skipif(CORE is None, reason="agxir.ccore is not built")

TESTS = Path(__file__).parents[1]
PROGRAMS, CHUNKS = 300, 6


def reference(fn: Function) -> str:
    if fn.level == "ssa":
        return print_ssa_function_reference(fn)
    return print_machine_function_reference(fn)


@pytest.fixture
def handed_back(monkeypatch):
    """The instructions the C hands to the reference while the test runs."""
    seen: list[Instruction] = []

    def counting(ins):
        seen.append(ins)
        return format_instruction_reference(ins)

    CORE.bind_printer(printer._core_facts, counting, *_binding()[2:])
    yield seen
    CORE.bind_printer(*_binding())


@cache
def _binding() -> tuple:
    minifloats = tuple("#" + repr(minifloat_value(bits)) for bits in range(256))
    return (printer._core_facts, format_instruction_reference, minifloats, printer._ZERO)


def outcome(call, *args):
    """What a call gives: its text, or the class of what it raises."""
    try:
        return call(*args)
    except Exception as error:  # the reference's error is the answer the C must give too
        return type(error)


def agree(fn: Function) -> str:
    """C and reference text of `fn` and each instruction the same; the reference text."""
    want = reference(fn)
    got = CORE.print_function(fn, fn.level != "ssa")
    assert got == want, want
    assert print_function(fn) == want
    for ins in fn.instructions():
        assert CORE.format_instruction(ins) == format_instruction_reference(ins)
    return want


def test_the_printer_is_built_and_wired_in():
    assert printer.format_instruction is CORE.format_instruction
    fn = parse_function("func @f(u0:32) {\nb0:\n  %a:32 = iadd u0, #1 shift=0\n  stop\n}\n")
    assert CORE.print_function(fn, False) == print_function(fn) == reference(fn)


# --- goldens, generated programs and the pipelines' functions -------------------------------


def _parses(path: Path):
    try:
        return parse_function(path.read_text(), str(path))
    except Exception:  # the goldens of parse errors
        return None


def test_every_golden(handed_back):
    paths = sorted(TESTS.rglob("*.agx"))
    parsed = [fn for path in paths if (fn := _parses(path)) is not None]
    assert len(parsed) > 100
    for fn in parsed:
        text = agree(fn)
        assert parse_function(text).level == fn.level
    assert {str(fn.level) for fn in parsed} >= {"ssa", "exec", "machine"}
    assert handed_back == []


@cache
def pipeline_functions(chunk: int) -> tuple[Function, ...]:
    """Programs chunk, chunk + CHUNKS, ... of seed 3, and every function each default
    pipeline's steps make of them."""
    _, pipelines = units_under_test(_NO_FLAGS)
    config = CampaignConfig(seed=3, pipelines=pipelines)
    found = []
    for index in range(chunk, PROGRAMS, CHUNKS):
        fn, _inputs = build_case(3, index, config)
        found.append(fn)
        for pipeline in pipelines:
            work = clone_reference(fn)
            for unit in pipeline:
                try:
                    unit.run(work)
                except Exception:  # a pass that declines (an allocator's bound): it ends here
                    break
                found.append(clone_reference(work))
    return tuple(found)


class _NoFlags:
    passes = python_passes = pass_commands = None


_NO_FLAGS = _NoFlags()


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_generated_programs_through_every_default_pipeline(chunk, handed_back):
    functions = pipeline_functions(chunk)
    for fn in functions:
        agree(fn)
    assert {str(fn.level) for fn in functions} == {"ssa", "exec", "vreg", "machine"}
    assert any(fn.notes for fn in functions)
    assert any(ins.dests for fn in functions for ins in fn.instructions())
    assert handed_back == []


# --- every opcode row of every level, with varied operands and attributes --------------------


class Mode(enum.IntEnum):
    ONE = 1


def _levels():
    yield "ssa", OPCODES
    for level in ("exec", "vreg", "machine"):
        yield level, opcodes_for_level(level)


def _operands(level: str, uniform: Uniform, value: Value) -> list[ir.Operand]:
    refs = [value, uniform, Immediate(0), Immediate(7), Immediate(0x38), Immediate(255),
            Immediate(256), Immediate(65535), Immediate(-3)]
    if level != "ssa":
        refs += [Register(0, 16), Register(3, 16), Register(4, 32), Register(5, 32),
                 Register(8, 64), Register(6, 64), Register(254, 32), VirtualRegister(7, 32),
                 VirtualRegister(0, 16)]
    return [Operand(ref, a, n) for ref in refs for a, n in ((0, 0), (1, 0), (0, 1), (1, 1))]


def _attribute_values(attr: spec.Attr) -> list:
    values = attr.values  # (a range may be too long for len())
    picked = [values[0], values[-1]] if values else []
    return picked + [-1, 0, 2**70, True, 1.5, "name", None, Mode.ONE]


def _instructions(level: str, row: spec.Opcode, blocks: list[Block]):
    uniform = Uniform("u1", 32)
    value = Value("a", 32)
    operands = _operands(level, uniform, value)
    dests = [Value("d", 32), None]
    if level != "ssa":
        dests += [Register(2, 32), Register(3, 32), Register(1, 16), VirtualRegister(3, 64)]
    count = max(len(row.srcs), 2 if row.variadic else 0)
    for turn in range(len(operands)):
        srcs = [operands[(turn * 7 + k * 5) % len(operands)] for k in range(count)]
        attrs = {}
        for k, attr in enumerate(row.attrs):
            choices = _attribute_values(attr)
            if (turn + k) % 5:
                attrs[attr.name] = choices[(turn + k) % len(choices)]
        dest = dests[turn % len(dests)] if row.has_dest else None
        targets = blocks[: row.targets or (len(srcs) if row.variadic else 0)]
        if turn % 9 == 4:
            targets = targets[:-1]  # a phi with fewer blocks than sources, a short branch
        yield Instruction(row, dest, srcs, attrs, targets, bool(turn % 4 == 1))
    for fixed in row.aliases.values():  # every alias, with the zero source or not
        for last in (Operand(Immediate(0)), Operand(Immediate(1)), Operand(Immediate(0), True)):
            srcs = [Operand(value)] * (len(row.srcs) - 1) + [last]
            yield Instruction(row, Value("x", 32), srcs, dict(fixed), [])
            yield Instruction(row, Value("x", 32), srcs[:-1], dict(fixed), [])
            yield Instruction(row, Value("x", 32), srcs, {k: float(v) for k, v in fixed.items()
                                                           if isinstance(v, int)}, [])
    yield Instruction(row, None, [], {"undeclared": 1}, [])
    yield Instruction(row, None, [], {"undeclared": 1, 5: 2}, [])  # unsortable: both raise


@pytest.mark.parametrize("level, table", list(_levels()), ids=[level for level, _ in _levels()])
def test_every_opcode_row_with_varied_operands_and_attributes(level, table, handed_back):
    blocks = [Block("b1"), Block("b2"), Block("loop")]
    checked = 0
    for row in table.values():
        made = list(_instructions(level, row, blocks))
        for ins in made:
            want = outcome(format_instruction_reference, ins)
            assert outcome(CORE.format_instruction, ins) == want, (row.name, want)
            checked += 1
        fn = Function("f", [Uniform("u1", 32), Uniform("p", 64, 64)],
                      [Block("b0", [ins for ins in made if not isinstance(
                          outcome(format_instruction_reference, ins), type)],
                          logical_successors=blocks[:2])] + blocks, level=level)
        fn.notes = {"demand": 12, "bound": 40}
        assert CORE.print_function(fn, level != "ssa") == reference(fn)
    assert checked > 1000
    assert 0 < len(handed_back) < checked  # the odd ones only


def test_float_immediates_and_numbers_spelled_as_python_does(handed_back):
    row = OPCODES["fadd"]
    for bits in [*range(-2, 300), 65535, 2**40, -(2**63), 2**64]:
        for abs_, neg in ((0, 0), (1, 1)):
            ins = Instruction(row, Value("x", 32), [Operand(Immediate(bits), abs_, neg)] * 2)
            assert CORE.format_instruction(ins) == format_instruction_reference(ins)
    assert len(handed_back) == 2  # only 2**64 is past the C's integers
    for number in (1.5, -0.0, math.nan, math.inf, 1e300, 5e-324, 0.1, 2**70, -(2**70)):
        ins = Instruction(OPCODES["mov_imm"], Value("x", 32), [], {"value": number})
        assert CORE.format_instruction(ins) == format_instruction_reference(ins)
        ins.opcode = OPCODES["bitop"]
        ins.attrs = {"tt": number}
        ins.srcs = [Operand(Value("a", 32))] * 2
        assert CORE.format_instruction(ins) == format_instruction_reference(ins)


# --- odd objects: the reference's text or error ----------------------------------------------


class OddValue(Value):
    pass


class OddRegister(Register):
    pass


class OddOperand(Operand):
    pass


class OddInstruction(Instruction):
    pass


class Text(str):
    pass


def _odd_instructions():
    add, phi, br = OPCODES["iadd"], OPCODES["phi"], OPCODES["jump"]
    a = Value("a", 32)
    machine = opcodes_for_level("machine")
    copy = machine["parallel_copy"]
    yield Instruction(add, Value("é", 32), [Operand(Value("ü", 32)), Operand(Uniform("ß", 32))])
    yield Instruction(add, Value("\ud800", 32), [Operand(a)] * 2)  # no UTF-8 for it
    yield Instruction(add, Value("x", 32), [Operand(Value("\udfff", 32))] * 2)
    yield Instruction(add, Value(5, 32), [Operand(a)] * 2)  # f"%{5}:32" prints
    yield Instruction(add, Value("x", 32), [Operand(Value(5, 32))] * 2)  # "%" + 5 raises
    yield Instruction(add, Value("x", 32), [Operand(Value(5, 32), True)] * 2)
    yield Instruction(add, Value(Text("t"), 32), [Operand(Value(Text("t"), 32))] * 2)
    yield Instruction(add, Value("x", True), [Operand(a)] * 2)
    yield Instruction(add, OddValue("x", 32), [Operand(OddValue("y", 32))] * 2)
    yield Instruction(add, Value("x", 32), [OddOperand(a), Operand(Immediate(True))])
    yield Instruction(add, Value("x", 32), [Operand(Uniform(7, 32)), Operand(a, 1, 0)])
    yield Instruction(add, Value("x", 32), (Operand(a), Operand(a)))  # tuples, not lists
    yield Instruction(add, Value("x", 32), [Operand(a), "not an operand"])
    yield Instruction(add, Value("x", 32), [Operand(a), Operand(3)])
    yield Instruction(add, Value("x", 32), [Operand(a), Operand(a, "yes", [])])
    yield OddInstruction(add, Value("x", 32), [Operand(a)] * 2)
    for register in (Register(3, 48), Register(-1, 32), Register(5, 8), Register(2**40, 16),
                     Register(7, 64), OddRegister(4, 32), VirtualRegister(2**70, 16),
                     VirtualRegister(-1, 32), VirtualRegister("q", 16)):
        yield Instruction(machine["iadd"], register, [Operand(register, 1, 1), Operand(register)])
        yield Instruction(copy, None, [Operand(register)] * 2, dests=[register, Register(0, 16)])
    yield Instruction(copy, None, [], dests=())
    yield Instruction(copy, None, [], dests=None)
    yield Instruction(phi, Value("p", 32), [Operand(a), Operand(Immediate(0x38), True)],
                      blocks=[Block("b1")])
    yield Instruction(phi, Value("p", 32), [Operand(a)] * 2, blocks=[Block(3), Block(None)])
    yield Instruction(br, None, [], blocks=[Block(3)])
    yield Instruction(br, None, [], blocks=[Block(Text("b"))])
    yield Instruction(br, None, [], blocks=(Block("b1"), Block("b2")))
    yield Instruction(br, None, [], blocks="b1")
    yield Instruction(add, Value("x", 32), [Operand(a)] * 2, attrs=_Mapping())
    yield Instruction(add, Value("x", 32), [Operand(a)] * 2, sat=[1])
    yield Instruction(add, Value("x", 32), [Operand(a)] * 2, sat=_Truthless())
    yield Instruction(dataclasses.replace(add, name=Text("iadd")), a, [Operand(a)] * 2)
    yield Instruction(dataclasses.replace(add, name=7), a, [Operand(a)] * 2)
    twice = dataclasses.replace(OPCODES["bitop"], attrs=OPCODES["bitop"].attrs * 2)
    yield Instruction(twice, a, [Operand(a)] * 2, {"tt": 8})
    yield Instruction(twice, a, [Operand(a)] * 2, {"tt": 3, "other": 1})
    yield Instruction(OPCODES["bitop"], a, [Operand(a)] * 2, {"tt": _Weird()})
    yield Instruction(OPCODES["mov_imm"], a, [], {"value": _Weird()})
    yield Instruction(OPCODES["mov_imm"], a, [], {"value": Mode.ONE})
    yield Instruction(OPCODES["bitop"], a, [Operand(a), Operand(Immediate(0))], {"tt": _Weird()})
    missing = Instruction(add, a, [Operand(a)] * 2)
    del missing.srcs
    yield missing


class _Mapping(dict):
    pass


class _Truthless:
    def __bool__(self):
        raise ValueError("no truth")


class _Weird:
    def __format__(self, spec):
        return f"weird<{spec}>"

    def __ne__(self, other):
        return True


def test_odd_objects_get_the_references_text_or_error(handed_back):
    checked = 0
    for ins in _odd_instructions():
        want = outcome(format_instruction_reference, ins)
        assert outcome(CORE.format_instruction, ins) == want, want
        checked += 1
    assert checked > 50
    assert handed_back  # some were the reference's


def _function_variants():
    machine = opcodes_for_level("machine")
    b0, b1 = Block("b0"), Block("b1")
    b0.instructions = [Instruction(machine["iadd"], Register(2, 32),
                                   [Operand(Register(4, 32)), Operand(Uniform("u", 32))]),
                       Instruction(machine["stop"], None, [])]
    for level in ("ssa", "exec", "vreg", "machine"):
        fn = Function("f", [Uniform("u", 32), Uniform("buf", 64, 256)], [b0, b1], level=level)
        yield fn
        for change in (
            lambda f: setattr(f, "notes", {"demand": 3, "bound": True, "x": "y"}),
            lambda f: setattr(f, "notes", _Mapping(a=1)),
            lambda f: setattr(f, "notes", None),
            lambda f: setattr(b0, "logical_successors", [b1, b0]),
            lambda f: setattr(b0, "logical_successors", (b1,)),
            lambda f: setattr(b0, "logical_successors", []),
            lambda f: setattr(b0, "logical_successors", [Block(4)]),
            lambda f: setattr(b0, "logical_successors", "b1"),
            lambda f: setattr(f, "name", Text("g")),
            lambda f: setattr(f, "name", 12),
            lambda f: setattr(f, "name", "\ud800"),
            lambda f: setattr(f, "uniforms", (Uniform(3, 16),)),
            lambda f: setattr(f, "uniforms", None),
            lambda f: setattr(f, "blocks", (b0,)),
            lambda f: setattr(b1, "name", 9),
            lambda f: setattr(b1, "instructions", (b0.instructions[1],)),
        ):
            variant = Function(fn.name, list(fn.uniforms), [b0, b1], level=level)
            saved = (b0.logical_successors, b1.name, b1.instructions)
            change(variant)
            yield variant
            b0.logical_successors, b1.name, b1.instructions = saved


def test_odd_functions_get_the_references_text_or_error():
    for fn in _function_variants():
        machine = fn.level != "ssa"
        want = outcome(reference, fn)
        got = outcome(CORE.print_function, fn, machine)
        assert got in (want, NotImplemented), want
        assert outcome(print_function, fn) == want
    assert CORE.print_function("not a function", True) is NotImplemented
    with pytest.raises(TypeError):
        CORE.print_function(Function("f"))


# --- leaks ----------------------------------------------------------------------------------


PROGRAM = """func.machine @f(u0:32, p:ptr[64]) demand=4 bound=8 {
b0: -> b1
  r2 = iadd r4.abs, u0 shift=0
  d2 = mov_imm value=0x12
  r0l, r0h = parallel_copy r0h, r0l
  r1 = bitop r2, #0 tt=5
  h3:32 = fadd h5.neg:32, #1.5
b1:
  stop
}
"""


def test_ten_thousand_prints_and_errors_leak_nothing():
    fn = parse_function(PROGRAM)
    text = print_function(fn)
    assert text == reference(fn)
    shared = [fn.uniforms[0], fn.level, fn.name,
              *[ins.opcode for ins in fn.instructions()],
              *[src.ref for ins in fn.instructions() for src in ins.srcs]]
    odd = Instruction(OPCODES["iadd"], Value("x", 32), [Operand(Value(5, 32))] * 2)
    gc.collect()
    counts = [sys.getrefcount(obj) for obj in shared]
    objects = len(gc.get_objects())
    for _ in range(10_000):
        assert CORE.print_function(fn, True) == text
        for ins in fn.instructions():
            CORE.format_instruction(ins)
        with pytest.raises(TypeError):
            CORE.format_instruction(odd)
    gc.collect()
    assert [sys.getrefcount(obj) for obj in shared] == counts
    assert len(gc.get_objects()) <= objects + 10
