"""The verifier (agxir.verifier): each rule with a valid and an invalid case."""

from __future__ import annotations

import dataclasses

import pytest

from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes import OPCODES
from agxir.verifier import VerificationFailed, VerifyError, check, verify

# --- building IR by hand ------------------------------------------------------------------------


def src(ref, abs=False, neg=False) -> Operand:
    if isinstance(ref, int):
        ref = Immediate(ref)
    return Operand(ref, abs, neg)


def ins(name, dest=None, *srcs, attrs=None, blocks=(), sat=False, row=None) -> Instruction:
    return Instruction(
        row or OPCODES[name],
        dest,
        [s if isinstance(s, Operand) else src(s) for s in srcs],
        dict(attrs or {}),
        list(blocks),
        sat,
    )


def mov(dest: Value, value: int = 1) -> Instruction:
    return ins("mov_imm", dest, attrs={"value": value})


def iadd(dest: Value, a, b) -> Instruction:
    return ins("iadd", dest, a, b, attrs={"shift": 0})


def export(value) -> Instruction:
    return ins("export", None, value, attrs={"slot": 0})


def jump(target: Block) -> Instruction:
    return ins("jump", blocks=[target])


def branch(a, b, then: Block, other: Block, cond="ult") -> Instruction:
    return ins("if_icmp", None, a, b, attrs={"cond": cond, "inv": 0}, blocks=[then, other])


def stop() -> Instruction:
    return ins("stop")


def phi(dest: Value, *incoming) -> Instruction:
    """incoming: (source, block) pairs."""
    return ins("phi", dest, *(s for s, _ in incoming), blocks=[b for _, b in incoming])


def blocks(count: int) -> list[Block]:
    return [Block(f"block{i}") for i in range(count)]


def function(*bodies, uniforms=()) -> Function:
    """One block per body; a body may refer to later blocks through `blocks(n)`."""
    return Function("f", list(uniforms), list(bodies))


def straight(*instructions, uniforms=()) -> Function:
    return Function("f", list(uniforms), [Block("block0", [*instructions, stop()])])


def messages(fn: Function) -> list[str]:
    return [str(error) for error in verify(fn)]


def assert_valid(fn: Function) -> None:
    assert verify(fn) == []
    check(fn)


def assert_error(fn: Function, expected: str) -> None:
    found = messages(fn)
    assert any(expected in message for message in found), found


def v(name: str, size: int = 32) -> Value:
    return Value(name, size)


# --- shapes used by several tests ---------------------------------------------------------------


def diamond(join_body) -> Function:
    """block0 branches on %a to block1 (%b = a + 1) or block2 (%c = a + 2); both join at
    block3, whose body `join_body(b, c, block1, block2)` is followed by stop."""
    b0, b1, b2, b3 = blocks(4)
    a, b, c = v("a"), v("b"), v("c")
    b0.instructions = [mov(a), branch(a, 0, b1, b2)]
    b1.instructions = [iadd(b, a, 1), jump(b3)]
    b2.instructions = [iadd(c, a, 2), jump(b3)]
    b3.instructions = [*join_body(b, c, b1, b2), stop()]
    return function(b0, b1, b2, b3)


def counting_loop(exit_use=None, latch_source=None) -> Function:
    """block0: i0 = 0; block1: i = phi(i0, next), exit when i >= 10; block2: next = i + 1."""
    b0, b1, b2, b3 = blocks(4)
    i0, i, nxt = v("i0"), v("i"), v("next")
    b0.instructions = [mov(i0, 0), jump(b1)]
    b1.instructions = [
        phi(i, (i0, b0), (latch_source or nxt, b2)),
        branch(i, 10, b2, b3),
    ]
    b2.instructions = [iadd(nxt, i, 1), jump(b1)]
    b3.instructions = [export(exit_use or i), stop()]
    return function(b0, b1, b2, b3)


# --- reporting ----------------------------------------------------------------------------------


def test_error_text_names_block_instruction_and_opcode():
    error = VerifyError("block1", 3, "use of %y is not dominated by its definition", "iadd %x")
    assert (
        str(error)
        == "block1, instruction 3 (iadd %x): use of %y is not dominated by its definition"
    )
    assert str(VerifyError(None, None, "function has no blocks")) == "function has no blocks"
    assert str(VerifyError("block2", None, "block is empty")) == "block2: block is empty"


def test_check_raises_every_error_joined_by_newlines():
    y = v("y")
    fn = straight(iadd(v("x"), y, 1), export(v("z")))
    with pytest.raises(VerificationFailed) as raised:
        check(fn)
    errors = raised.value.errors
    assert len(errors) == 2
    assert str(raised.value) == "\n".join(str(e) for e in errors)
    assert str(errors[0]) == "block0, instruction 0 (iadd %x): %y is used but never defined"
    assert errors[0].block == "block0" and errors[0].index == 0


# --- 1. function and block names ----------------------------------------------------------------


def test_valid_straight_line():
    x, y = v("x"), v("y")
    assert_valid(straight(mov(x), iadd(y, x, 3), export(y)))


def test_function_needs_a_block():
    assert messages(Function("f")) == ["function has no blocks"]


def test_block_names_are_unique():
    b1 = Block("same", [stop()])
    b0 = Block("same", [jump(b1)])
    assert_error(function(b0, b1), "same: block name same is used by two blocks")


def test_block_listed_twice():
    b0, b1 = blocks(2)
    b0.instructions, b1.instructions = [jump(b1)], [stop()]
    assert_error(function(b0, b1, b1), "block1: block appears more than once in the function")


def test_entry_has_no_predecessors():
    b0, b1 = blocks(2)
    b0.instructions = [jump(b1)]
    b1.instructions = [branch(0, 0, b0, b1, cond="ueq")]  # b1 -> b1 is fine, b1 -> b0 is not
    assert_error(
        function(b0, b1),
        "block0: the entry block must have no predecessors, but block1 branches to it",
    )


# --- 2. block layout ------------------------------------------------------------------------------


def test_block_must_not_be_empty():
    b0, b1 = blocks(2)
    b0.instructions = [jump(b1)]
    assert_error(function(b0, b1), "block1: block is empty; it must end in a terminator")


def test_block_must_end_in_a_terminator():
    fn = Function("f", [], [Block("block0", [mov(v("x"))])])
    assert_error(fn, "block0: block does not end in a terminator (its last instruction is mov_imm)")


def test_terminator_only_at_the_end():
    b0, b1 = blocks(2)
    b0.instructions = [jump(b1), stop()]
    b1.instructions = [stop()]
    assert_error(function(b0, b1), "block0, instruction 0 (jump): terminator jump must be the last")


def test_phis_come_first():
    fn = diamond(lambda b, c, b1, b2: [phi(v("p"), (b, b1), (c, b2))])
    assert_valid(fn)
    fn = diamond(lambda b, c, b1, b2: [mov(v("m")), phi(v("p"), (b, b1), (c, b2))])
    assert_error(
        fn, "block3, instruction 1 (phi %p): phi after a non-phi instruction; phis must come first"
    )


# --- 3. single definition ---------------------------------------------------------------------


def test_value_defined_twice():
    x = v("x")
    assert_error(
        straight(mov(x), mov(x)),
        "block0, instruction 1 (mov_imm %x): %x is defined more than once (first in block0, "
        "instruction 0)",
    )


def test_value_names_are_unique():
    assert_error(
        straight(mov(v("x")), mov(v("x"))),
        "value name %x is already used by another value (defined in block0, instruction 0)",
    )


# --- 4. definitions dominate uses -------------------------------------------------------------


def test_use_of_undefined_value():
    assert_error(straight(export(v("y"))), "%y is used but never defined")


def test_use_of_a_lookalike_value():
    x = v("x")
    assert_error(
        straight(mov(x), export(v("x"))),
        "%x is used but never defined (a different value named %x is defined",
    )


def test_use_before_definition_in_the_same_block():
    x, y = v("x"), v("y")
    assert_error(
        straight(iadd(y, x, 1), mov(x)),
        "block0, instruction 0 (iadd %y): use of %x is not dominated by its definition",
    )
    assert_error(straight(iadd(y, y, 1)), "use of %y is not dominated by its definition")


def test_join_uses_through_a_phi():
    p = v("p")
    fn = diamond(lambda b, c, b1, b2: [phi(p, (b, b1), (c, b2)), export(p)])
    assert_valid(fn)


def test_join_cannot_use_one_arm_directly():
    fn = diamond(lambda b, c, b1, b2: [export(b)])
    assert messages(fn) == [
        "block3, instruction 0 (export): use of %b is not dominated by its definition"
    ]


def test_join_can_use_the_branch_block():
    b0, b1, b2, b3 = blocks(4)
    a = v("a")
    b0.instructions = [mov(a), branch(a, 0, b1, b2)]
    b1.instructions = [jump(b3)]
    b2.instructions = [jump(b3)]
    b3.instructions = [export(a), stop()]
    assert_valid(function(b0, b1, b2, b3))


def test_phi_source_must_dominate_its_predecessor():
    # the phi takes %c on the edge from block1, but %c is defined in block2
    fn = diamond(lambda b, c, b1, b2: [phi(v("p"), (c, b1), (b, b2))])
    assert_error(
        fn,
        "block3, instruction 0 (phi %p): phi source %c for predecessor block1 is not available "
        "there: its definition in block2 does not dominate block1",
    )


def test_loop_phi_is_valid():
    assert_valid(counting_loop())


def test_loop_exit_cannot_use_the_latch_value():
    fn = counting_loop(exit_use=v("next"))
    assert_error(fn, "%next is used but never defined")
    b0, b1, b2, b3 = fn.blocks
    nxt = b2.instructions[0].dest
    b3.instructions[0] = export(nxt)
    assert messages(fn) == [
        "block3, instruction 0 (export): use of %next is not dominated by its definition"
    ]


def test_loop_phi_may_read_its_own_result():
    fn = counting_loop()
    b0, b1, b2, b3 = fn.blocks
    i = b1.instructions[0].dest
    b1.instructions[0].srcs[1] = src(i)
    assert_valid(fn)


def test_dominance_is_not_checked_in_unreachable_blocks():
    b0, b1, dead = blocks(3)
    x, y = v("x"), v("y")
    b0.instructions = [mov(x), jump(b1)]
    b1.instructions = [export(x), stop()]
    dead.instructions = [iadd(v("z"), y, 1), mov(y), jump(b1)]
    fn = function(b0, b1, dead)
    assert_valid(fn)
    # ...but a live use of a value defined only in dead code is still an error
    b1.instructions = [export(y), stop()]
    assert_error(fn, "block1, instruction 0 (export): use of %y is not dominated")


def test_phi_edges_from_dead_blocks_are_not_dominance_checked():
    b0, b1, dead = blocks(3)
    x, y, p = v("x"), v("y"), v("p")
    b0.instructions = [mov(x), jump(b1)]
    b1.instructions = [phi(p, (x, b0), (y, dead)), export(p), stop()]
    dead.instructions = [mov(y), jump(b1)]
    assert_valid(function(b0, b1, dead))
    b1.instructions[0] = phi(p, (y, b0), (x, dead))
    assert_error(function(b0, b1, dead), "phi source %y for predecessor block0 is not available")


# --- 5. phis ------------------------------------------------------------------------------------


def test_phi_follows_predecessor_order():
    fn = diamond(lambda b, c, b1, b2: [phi(v("p"), (c, b2), (b, b1))])
    assert_error(
        fn,
        "block3, instruction 0 (phi %p): phi sources must follow predecessor order: expected "
        "[block1, block2], found [block2, block1]",
    )


def test_phi_blocks_must_be_the_predecessors():
    fn = diamond(lambda b, c, b1, b2: [phi(v("p"), (b, b1), (b, b1))])
    assert_error(
        fn,
        "phi incoming blocks must be the predecessors: expected [block1, block2], found "
        "[block1, block1]",
    )


def test_phi_source_count_matches_predecessors():
    fn = diamond(lambda b, c, b1, b2: [phi(v("p"), (b, b1))])
    assert_error(fn, "phi has 1 source but block3 has 2 predecessors")
    fn = diamond(lambda b, c, b1, b2: [ins("phi", v("p"), b, c, blocks=[b1])])
    assert_error(fn, "phi has 2 sources but 1 incoming block")


def test_phi_needs_predecessors():
    assert_error(straight(ins("phi", v("p"))), "phi in a block with no predecessors")


def test_phi_source_sizes_match_the_destination():
    fn = diamond(lambda b, c, b1, b2: [phi(v("p", 16), (b, b1), (c, b2))])
    assert_error(fn, "phi source %b is 32-bit but the destination is 16-bit")
    fn = diamond(lambda b, c, b1, b2: [phi(v("p", 16), (src(7), b1), (src(9), b2))])
    assert_valid(fn)


def test_phi_sources_carry_no_modifiers():
    fn = diamond(lambda b, c, b1, b2: [phi(v("p"), (b, b1), (src(c, neg=True), b2))])
    assert_error(fn, "phi sources cannot carry modifiers (.neg on source 1)")


# --- 6. the opcode row --------------------------------------------------------------------------


def test_source_count():
    x = v("x")
    assert_error(straight(ins("iadd", x, 1, attrs={"shift": 0})), "iadd takes 2 sources, found 1")


def test_target_count():
    b0 = Block("block0")
    b0.instructions = [ins("stop", blocks=[b0])]
    assert_error(function(b0), "stop takes no target blocks, found 1")
    b0.instructions = [ins("jump")]
    assert_error(function(b0), "jump takes 1 target block, found 0")
    b0.instructions = [mov(v("x")), iadd(v("y"), 1, 1), stop()]
    b0.instructions[1].blocks = [b0]
    assert_error(function(b0), "iadd takes no target blocks, found 1")


def test_targets_are_blocks_of_the_function():
    b0 = Block("block0", [jump(Block("elsewhere", [stop()]))])
    assert_error(function(b0), "target elsewhere is not a block of this function")


def test_two_way_branch_targets_differ():
    b0, b1 = blocks(2)
    b0.instructions = [branch(0, 0, b1, b1)]
    b1.instructions = [stop()]
    assert_error(function(b0, b1), "the two targets of if_icmp must differ (both are block1)")


def test_destination_presence_and_size():
    assert_error(straight(ins("iadd", None, 1, 2, attrs={"shift": 0})), "iadd needs a destination")
    fn = Function("f", [], [Block("block0", [ins("stop", v("x"))])])
    assert_error(fn, "stop has no destination, but %x is given")
    assert_error(
        straight(ins("icmp", v("x", 64), 1, 2, attrs={"cond": "ult", "inv": 0})),
        "destination %x is 64-bit; icmp writes 16 or 32 bits",
    )
    assert_valid(straight(ins("icmp", v("x", 16), 1, 2, attrs={"cond": "ult", "inv": 0})))


def test_sat_only_where_the_row_allows_it():
    x = v("x")
    assert_valid(straight(ins("fadd", x, 1, 2, sat=True)))
    assert_error(
        straight(ins("iadd", x, 1, 2, attrs={"shift": 0}, sat=True)), ".sat is not allowed on iadd"
    )


def test_attributes_match_the_row():
    x = v("x")
    assert_error(straight(ins("iadd", x, 1, 2)), "missing attribute shift")
    assert_error(
        straight(ins("iadd", x, 1, 2, attrs={"shift": 0, "cond": "ult"})),
        "iadd has no attribute cond",
    )
    assert_error(
        straight(ins("iadd", x, 1, 2, attrs={"shift": 5})),
        "shift=5 is not a valid value for attribute shift (expected 0, 1, 2, 3 or 4)",
    )
    assert_error(
        straight(ins("icmp", x, 1, 2, attrs={"cond": "nope", "inv": 0})),
        "cond='nope' is not a valid value for attribute cond (expected ueq, ult, ugt, seq, slt "
        "or sgt)",
    )
    assert_error(
        straight(ins("icmp", x, 1, 2, attrs={"cond": "ult", "inv": True})),
        "inv=True is not a valid value for attribute inv",
    )
    assert_error(
        straight(ins("bfi", x, 1, 2, 3, attrs={"mask": 99})),
        "mask=99 is not a valid value for attribute mask (expected 0..64)",
    )


def test_uniforms_must_be_declared():
    declared, stray = Uniform("u0", 32), Uniform("u1", 32)
    x = v("x")
    assert_valid(straight(iadd(x, declared, 1), uniforms=[declared]))
    assert_error(
        straight(iadd(x, stray, 1), uniforms=[declared]),
        "uniform u1 is not declared by the function",
    )
    # identity, not name
    assert_error(
        straight(iadd(x, Uniform("u0", 32), 1), uniforms=[declared]),
        "uniform u0 is not declared by the function",
    )


def test_uniform_declarations():
    buf = Uniform("buf", 64, 64)
    buf.size = 32  # Uniform() refuses this; a mutator editing it afterwards does not
    fn = straight(uniforms=[Uniform("u", 32), Uniform("u", 8), buf])
    found = messages(fn)
    assert "uniform name u is declared twice" in found
    assert "uniform u is 8-bit; uniforms are 16, 32 or 64 bits" in found
    assert "buffer uniform buf must be 64-bit" in found
    assert_valid(straight(uniforms=[Uniform("u", 32), Uniform("buf", 64, 64)]))


# --- 7. sources -----------------------------------------------------------------------------------


def test_immediates_only_where_allowed():
    x = v("x")
    assert_error(
        straight(ins("u2u64", v("x", 64), 1)),
        "source a of u2u64 cannot be an immediate",
    )
    # convert takes an integer immediate (Mesa inlines one, issue 20), but not as an f2f
    assert_valid(straight(ins("convert", x, 255, attrs={"mode": "u2f"})))
    assert_valid(straight(ins("convert", x, 5, attrs={"mode": "f2s"})))
    assert_error(
        straight(ins("convert", x, 256, attrs={"mode": "u2f"})),
        "immediate #256 does not fit the 8-bit immediate of source a of convert",
    )
    assert_error(
        straight(ins("convert", x, 1, attrs={"mode": "f2f"})),
        "convert mode=f2f cannot take an immediate",
    )


def test_immediate_ranges():
    x = v("x")
    assert_valid(straight(iadd(x, 255, 0)))
    assert_error(
        straight(iadd(x, 256, 0)),
        "immediate #256 does not fit the 8-bit immediate of source a of iadd",
    )
    assert_error(straight(iadd(x, -1, 0)), "immediate #-1 does not fit")
    assert_error(
        straight(ins("fadd", x, 1, 256)),
        "immediate #256 does not fit the 8-bit float immediate of source b of fadd",
    )
    base = Uniform("buf", 64, 64)

    def load(index):
        return ins("device_load", x, base, index, attrs={"fmt": "i32", "shift": 0})

    assert_valid(straight(load(65535), uniforms=[base]))
    assert_error(
        straight(load(65536), uniforms=[base]),
        "immediate #65536 does not fit the 16-bit immediate of source index of device_load",
    )


def test_uniform_only_where_allowed():
    u = Uniform("u", 32)
    row = dataclasses.replace(
        OPCODES["signext"],
        srcs=(dataclasses.replace(OPCODES["signext"].srcs[0], uniform=False),),
    )
    fn = straight(ins("signext", v("x"), u, row=row), uniforms=[u])
    assert_error(fn, "source a of signext cannot be a uniform")


def test_modifiers():
    x, y = v("x"), v("y")
    assert_valid(straight(mov(x), iadd(y, src(x, abs=True), src(x, abs=True, neg=True))))
    assert_error(
        straight(mov(x), iadd(y, src(x, neg=True), x)),
        "block0, instruction 1 (iadd %y): modifier .neg is not allowed on source a of iadd",
    )
    assert_error(
        straight(mov(x), ins("signext", y, src(x, abs=True))),
        "modifier .abs is not allowed on source a of signext",
    )


def test_source_sizes():
    x16, x32, y = v("x16", 16), v("x32", 32), v("y", 64)
    base = Uniform("buf", 64, 64)
    fn = straight(mov(x16), ins("ulea", y, base, x16, attrs={"shift": 0}), uniforms=[base])
    assert_error(fn, "source index of ulea (%x16) is 16-bit; it must be 32 bits")
    fn = straight(mov(x32), ins("ulea", y, base, x32, attrs={"shift": 0}), uniforms=[base])
    assert_valid(fn)


def test_same_as_dest_width():
    x16, x32, d = v("x16", 16), v("x32", 32), v("d", 32)
    sel = ins("icmpsel", d, 1, 2, x16, x32, attrs={"cond": "ult"})
    assert_error(
        straight(mov(x16), mov(x32), sel),
        "source x of icmpsel (%x16) is 16-bit but the destination is 32-bit; they must match",
    )
    sel = ins("icmpsel", d, x16, 2, x32, x32, attrs={"cond": "ult"})
    assert_valid(straight(mov(x16), mov(x32), sel))


def test_at_most_dest_width():
    x64, d, e = v("x64", 64), v("d", 32), v("e", 64)
    assert_error(
        straight(mov(x64), iadd(d, x64, 1)),
        "source a of iadd (%x64) is 64-bit, wider than the 32-bit destination",
    )
    assert_valid(straight(mov(x64), iadd(e, x64, 1)))


def test_addresses_are_64_bit():
    x32, y = v("x32", 32), v("y", 64)
    narrow = Uniform("narrow", 32)
    fn = straight(mov(x32), ins("ulea", y, narrow, x32, attrs={"shift": 0}), uniforms=[narrow])
    assert messages(fn) == [
        "block0, instruction 1 (ulea %y): source base of ulea is an address and must be "
        "64-bit, found 32-bit"
    ]


# --- 8. the row's own check ---------------------------------------------------------------------


def test_row_check():
    assert_valid(straight(ins("bfi", v("x", 16), 1, 2, 3, attrs={"mask": 16})))
    assert_error(
        straight(ins("bfi", v("x", 16), 1, 2, 3, attrs={"mask": 17})),
        "block0, instruction 0 (bfi %x): mask=17 is wider than the 16-bit destination",
    )
    assert_error(straight(mov(v("x", 16), 1 << 16)), "value does not fit the 16-bit destination")


def test_row_check_is_skipped_when_the_shape_is_wrong():
    # bfi's check reads attrs["mask"] and dest.size; neither exists here
    found = messages(straight(ins("bfi", None, 1, 2, 3)))
    assert "block0, instruction 0 (bfi): bfi needs a destination" in found
    assert "block0, instruction 0 (bfi): missing attribute mask" in found


# --- scale ----------------------------------------------------------------------------------------


def test_long_chain_of_blocks_verifies():
    count = 20_000
    chain = blocks(count)
    previous = v("v0")
    chain[0].instructions = [mov(previous), jump(chain[1])]
    for i in range(1, count - 1):
        value = v(f"v{i}")
        chain[i].instructions = [iadd(value, previous, 1), jump(chain[i + 1])]
        previous = value
    chain[-1].instructions = [export(previous), stop()]
    assert_valid(function(*chain))


def test_a_deep_loop_nest_verifies_without_recursion():
    """Issue 19: no limit on a program's depth. Under a stack of 120 frames the verifier
    (dominators, dominance of uses) takes a 2000-deep nest, and still sees a use its
    definition does not dominate at the bottom of it."""
    from agxir.text import parse_function
    from bench.scale import nested_loops
    from tests.shallow_stack import shallow_stack

    text = nested_loops(2000)
    fn = parse_function(text)
    with shallow_stack():
        assert verify(fn) == []
    wrong = parse_function(text.replace("%n1999:32 = iadd %i1999", "%n1999:32 = iadd %n0"))
    with shallow_stack():
        errors = verify(wrong)
    assert [e.block for e in errors] == ["l1999"]
    assert "does not dominate" in errors[0].message or "dominat" in errors[0].message
