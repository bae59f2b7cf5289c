"""The verifiers' shapes judged once per process (`agxir.verifier_shapes`) and the machine
verifier's undefined reads on bit masks change no error: on generated functions of every
level and on copies broken the ways wrong passes break them, `verify_ssa` and
`verify_machine` give the errors (messages, order, block and index) of judging every
instruction in full (`reference=True`), with the cache warm from earlier functions. And a
shape key tells apart instructions that differ in any part the local checks read."""

from __future__ import annotations

import collections
import dataclasses

import pytest

from agxir.ir import Block, Immediate, Operand, Register, Uniform, Value, VirtualRegister
from agxir.machine.opcodes import opcodes_for_level
from agxir.machine.verifier import verify_machine
from agxir.ssa_verifier import verify_ssa
from agxir.text import parse_function
from agxir.verifier_shapes import shape_key
from tests.agxir.verifier_corpus import broken, functions


def _verify(fn, reference=False):
    if str(fn.level) == "ssa":
        return verify_ssa(fn, reference=reference)
    return verify_machine(fn, reference=reference)


def test_valid_functions_of_every_level_stay_valid():
    programs = functions()
    levels = collections.Counter(str(fn.level) for fn in programs)
    assert set(levels) == {"ssa", "exec", "vreg", "machine"} and len(programs) > 200
    for fn in programs:
        assert _verify(fn) == _verify(fn, reference=True) == []


def test_broken_functions_get_the_reference_errors():
    kinds = collections.Counter()
    for fn in (fn for seed in range(3) for fn in broken(seed, functions())):
        errors = _verify(fn)
        assert errors == _verify(fn, reference=True), str(fn.level)
        for error in errors:
            for part in ("is not a block of this function", "is not declared by the function",
                         "which no path from the entry writes", "is not written on the path",
                         "is not dominated", "not a valid value for attribute", "does not fit"):
                kinds[part, str(fn.level) == "ssa"] += part in error.message
        kinds["broken", str(fn.level)] += bool(errors)
    # the parts asked per function after a valid shape, the reads and the local checks all
    # had errors to find, at both verifiers
    for level in ("ssa", "exec", "vreg", "machine"):
        assert kinds["broken", level] >= 10, kinds
    for ssa in (True, False):
        for part in ("is not declared by the function", "not a valid value for attribute",
                     "does not fit"):
            assert kinds[part, ssa] > 0, (part, ssa, kinds)
    # (generated machine code has few jmp_exec: its foreign targets are tested below)
    assert kinds["is not a block of this function", True] > 0, kinds
    assert kinds["which no path from the entry writes", False] > 0, kinds
    assert kinds["is not dominated", True] > 0, kinds


def test_an_invalid_shape_after_a_valid_one_is_reported_each_time():
    text = ("func.machine @v(u0:32) {\nb0:\n  r1 = mov_imm value=0x1\n"
            "  r2 = iadd r1, r1 shift=1\n  r2 = iadd r1, r1 shift=1\n  export r2 slot=0\n  stop\n}\n")
    fn = parse_function(text)
    assert verify_machine(fn) == []
    fn.blocks[0].instructions[1].attrs["shift"] = True  # equal to 1, but not an int
    fn.blocks[0].instructions[2].sat = True
    errors = verify_machine(fn)
    assert [e.index for e in errors] == [1, 2] and errors == verify_machine(fn, reference=True)


MACHINE_JUMP = """\
func.machine @f(u0:32) {
entry: -> done
  r2 = iadd u0, #1 shift=0
  jmp_exec_none -> done
done:
  export r2 slot=0
  stop
}
"""


def test_a_valid_shape_with_a_foreign_target_or_uniform_is_still_reported():
    for level in ("machine", "ssa"):
        text = MACHINE_JUMP if level == "machine" else MACHINE_JUMP.replace(
            "func.machine", "func").replace("entry: -> done", "entry:").replace(
            "r2 = iadd u0, #1 shift=0", "%r:32 = iadd u0, #1 shift=0").replace(
            "jmp_exec_none", "jump").replace("export r2", "export %r")
        fn = parse_function(text)
        assert _verify(fn) == []  # the shapes are now known valid
        jump = fn.blocks[0].instructions[1]
        jump.blocks[0] = Block("elsewhere")
        fn.uniforms.clear()
        errors = _verify(fn)
        assert errors == _verify(fn, reference=True)
        messages = [e.message for e in errors]
        assert "target elsewhere is not a block of this function" in messages, messages
        assert "uniform u0 is not declared by the function" in messages, messages


def _variants():
    """An instruction and, per part the local checks read, a copy differing in that part."""
    row = opcodes_for_level("ssa")["iadd"]
    a, b = Value("a", 32), Value("b", 32)
    base = dataclasses.replace
    from agxir.ir import Instruction

    ins = Instruction(row, Value("d", 32), [Operand(a), Operand(b)], {"shift": 1})
    other_row = opcodes_for_level("ssa")["imul"]
    yield ins, "row", base(ins, opcode=other_row)
    yield ins, "sat", base(ins, sat=True)
    yield ins, "attribute value", base(ins, attrs={"shift": 2})
    yield ins, "attribute type", base(ins, attrs={"shift": True})
    yield ins, "attribute float", base(ins, attrs={"shift": 1.0})
    yield ins, "attribute name", base(ins, attrs={"shiftx": 1})
    yield ins, "attribute missing", base(ins, attrs={})
    yield ins, "dest size", base(ins, dest=Value("d", 16))
    yield ins, "dest kind", base(ins, dest=VirtualRegister(0, 32))
    yield ins, "dest register", base(ins, dest=Register(2, 32))
    yield ins, "no dest", base(ins, dest=None)
    yield ins, "source size", base(ins, srcs=[Operand(a), Operand(Value("b", 16))])
    yield ins, "source kind", base(ins, srcs=[Operand(a), Operand(Uniform("u", 32))])
    yield ins, "source count", base(ins, srcs=[Operand(a)])
    yield ins, "abs", base(ins, srcs=[Operand(a), Operand(b, abs=True)])
    yield ins, "neg", base(ins, srcs=[Operand(a), Operand(b, neg=True)])
    yield ins, "order of sizes", base(ins, srcs=[Operand(Value("x", 16)), Operand(b)])
    imm = base(ins, srcs=[Operand(a), Operand(Immediate(1))])
    yield imm, "immediate bits", base(imm, srcs=[Operand(a), Operand(Immediate(300))])
    yield imm, "immediate type", base(imm, srcs=[Operand(a), Operand(Immediate(True))])
    reg = base(ins, dest=Register(0, 32), srcs=[Operand(Register(2, 32)), Operand(Register(4, 32))])
    yield reg, "register", base(reg, srcs=[Operand(Register(2, 32)), Operand(Register(3, 32))])
    yield reg, "register dest", base(reg, dest=Register(6, 32))
    yield reg, "register size", base(reg, srcs=[Operand(Register(2, 16)), Operand(Register(4, 32))])
    yield reg, "vreg", base(reg, srcs=[Operand(VirtualRegister(2, 32)), Operand(Register(4, 32))])
    one, two = Block("one"), Block("two")
    jump = Instruction(opcodes_for_level("ssa")["jump"], None, [], {}, [one])
    yield jump, "target count", base(jump, blocks=[one, two])
    yield jump, "no target", base(jump, blocks=[])
    pair = base(jump, blocks=[one, two])
    yield pair, "same targets", base(jump, blocks=[one, one])


@pytest.mark.parametrize("case", list(_variants()), ids=lambda case: case[1])
def test_shapes_differing_in_a_read_part_have_different_keys(case):
    original, _part, changed = case
    assert shape_key(original) != shape_key(changed)


def test_what_no_local_check_reads_is_left_out_of_the_key():
    from agxir.ir import Instruction

    row = opcodes_for_level("ssa")["iadd"]
    first = Instruction(row, Value("d", 32), [Operand(Value("a", 32)), Operand(Uniform("u", 32))],
                        {"shift": 1}, [])
    second = Instruction(row, Value("e", 32), [Operand(Value("b", 32)), Operand(Uniform("w", 32))],
                         {"shift": 1}, [])
    assert shape_key(first) == shape_key(second)  # which value or uniform: asked per function
    phi = Instruction(opcodes_for_level("ssa")["phi"], Value("p", 32), [], {}, [])
    assert shape_key(phi) is None
