"""The instances a rule is proved on (agxir.rewrite.instances, .skeletons): every legal shape,
reduced only where the reduction provably covers what it drops."""

from __future__ import annotations

from agxir.ir import Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes.table import OPCODES
from agxir.passes import cmpsel, copyprop
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_
from agxir.rewrite.instances import instances, signature
from agxir.rewrite.skeletons import reading, shape_function, skeletons
from agxir.verifier import verify
from oracles.smt.rules import ProofEvaluator


def all_instances(rule):
    return list(instances(rule, ProofEvaluator()))


def test_cmpsel_collapses_the_operands_it_copies():
    found = all_instances(cmpsel.RULES[0])  # icmp, inv=0
    # compare t:16/32, 6 conditions, select 16/32/64, compare read at 16/32/64 bits
    assert len(found) == 2 * 6 * 3 * 3
    assert all(set(inst.collapsed) == {"a", "b", "x", "y"} for inst in found)
    assert len({signature(inst) for inst in found}) == len(found)
    for inst in found:
        assert verify_instance(inst)


def verify_instance(inst) -> bool:
    return not verify(shape_function(inst.source[:-1], inst.target, inst.inputs()))


def test_an_operand_read_differently_after_the_rewrite_is_not_collapsed():
    signed_to_unsigned = Rule(
        "slt-to-ult",
        Ins("icmp", (any_("a"), any_("b")), {"cond": "slt", "inv": Bind("inv")}),
        (Emit("icmp", (Use("a"), Use("b")), {"cond": "ult", "inv": Bind("inv")}),),
    )
    found = all_instances(signed_to_unsigned)
    assert found and all(not inst.collapsed for inst in found)
    kinds = {inst.forms["a"].kind for inst in found}
    assert kinds == {"value", "immediate"}  # uniforms read like values: proved once


def test_copyprop_is_proved_through_reads_covering_every_reading():
    found = all_instances(copyprop.RULES[0])
    assert all(inst.shortcut for inst in found)
    readings = {reading(inst.root, inst.skeleton.position)[0] for inst in found}
    assert readings == {"int", "int_cmp", "float", "float_cmp", "raw"}
    widths = {reading(inst.root, inst.skeleton.position)[1] for inst in found}
    assert widths == {16, 32, 64}


def test_focus_skeletons_group_their_representatives():
    keys = [s.key for s in skeletons(copyprop.RULES[1])]
    seen, previous = set(), None
    for key in keys:
        if key != previous:
            assert key not in seen, "a key's skeletons must come together"
            seen.add(key)
        previous = key
    assert len(seen) < len(keys)  # representatives vary inside a key


def test_reading_of_each_kind_of_slot():
    u16, u32 = Uniform("a", 16), Uniform("b", 32)
    d32 = Value("d", 32)
    icmp = Instruction(OPCODES["icmp"], Value("t", 16), [Operand(u16), Operand(u32)],
                       {"cond": "sgt", "inv": 0})
    assert reading(icmp, 0) == ("int_cmp", 32, True)
    iadd = Instruction(OPCODES["iadd"], d32, [Operand(u16), Operand(Immediate(3))], {"shift": 0})
    assert reading(iadd, 1) == ("int", 32)
    load = Instruction(OPCODES["device_load"], d32, [Operand(Uniform("p", 64)), Operand(u32)],
                       {"fmt": "i32", "shift": 0})
    assert reading(load, 1) == ("int", 64) and reading(load, 0) == ("raw", 64)
    select = Instruction(OPCODES["icmpsel"], Value("s", 64),
                         [Operand(u32), Operand(u32), Operand(Immediate(1)), Operand(u32)],
                         {"cond": "ult"})
    assert reading(select, 2) == ("raw", 64)
    fadd = Instruction(OPCODES["fadd"], d32, [Operand(u16), Operand(u32)], {})
    assert reading(fadd, 0) == ("float", 32)
