"""Parallel-copy sequentialization: a property over random parallel copies of 16, 32 and
64-bit registers, checked against a register-file simulation of the parallel semantics."""

from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.ir import Block, Function, Immediate, Instruction, Operand, Register
from agxir.machine.lower_copies import lower_copies
from agxir.machine.opcodes import opcodes_for_level
from oracles.machine.copy_checker import check_copy_lowering

COPY = opcodes_for_level("machine")["parallel_copy"]


@st.composite
def parallel_copies(draw):
    sizes = draw(st.lists(st.sampled_from((16, 32, 64)), min_size=1, max_size=6))
    taken: set[int] = set()
    dests, srcs = [], []
    for size in sizes:
        width = size // 16
        starts = [h for h in range(0, 32, width) if not taken & set(range(h, h + width))]
        if not starts:
            continue
        start = draw(st.sampled_from(starts))
        taken |= set(range(start, start + width))
        dests.append(Register(start, size))
        if draw(st.integers(0, 9)) == 0:
            srcs.append(Operand(Immediate(draw(st.integers(0, 0xFFFF)))))
        else:
            srcs.append(Operand(Register(draw(st.sampled_from(range(0, 32, width))), size)))
    return Instruction(COPY, None, srcs, {}, [], False, dests)


def _simulate_parallel(copy, halves):
    new = dict(halves)
    for dest, src in zip(copy.dests, copy.srcs, strict=True):
        for piece, half in enumerate(dest.halves):
            if isinstance(src.ref, Immediate):
                new[half] = src.ref.bits if piece == 0 else 0
            else:
                new[half] = halves[src.ref.half + piece]
    return new


def _simulate_sequential(instructions, halves):
    halves = dict(halves)
    for ins in instructions:
        dest = ins.dest
        if ins.name == "mov_imm":
            values = [(ins.attrs["value"] >> (16 * p)) & 0xFFFF for p in range(dest.size // 16)]
        else:
            a, b = ins.srcs
            left = [halves[a.ref.half + p] for p in range(dest.size // 16)]
            if ins.attrs["tt"] == 0x6:
                values = [x ^ halves[b.ref.half + p] for p, x in enumerate(left)]
            else:
                assert ins.attrs["tt"] == 0xA
                values = left
        for half, value in zip(dest.halves, values, strict=True):
            halves[half] = value
    return halves


@settings(max_examples=150)
@given(parallel_copies())
def test_sequentialized_copies_equal_the_parallel_semantics(copy):
    start = {h: (h * 7919 + 13) & 0xFFFF for h in range(32)}
    fn = Function("t", [], [Block("b0", [copy], [])], "machine")
    before = Function("t", [], [Block("b0", [copy], [])], "machine")
    lower_copies(fn)
    lowered = fn.blocks[0].instructions
    assert all(ins.name != "parallel_copy" for ins in lowered)
    assert _simulate_sequential(lowered, start) == _simulate_parallel(copy, start)
    assert check_copy_lowering(before, fn) == []


def _lowered(copy) -> list:
    fn = Function("t", [], [Block("b0", [copy], [])], "machine")
    assert lower_copies(fn)
    return fn.blocks[0].instructions


def test_copies_to_themselves_are_dropped():
    copy = Instruction(COPY, None, [Operand(Register(2, 32)), Operand(Register(8, 64))], {}, [],
                       False, [Register(2, 32), Register(8, 64)])
    assert _lowered(copy) == []


def test_a_cycle_of_any_length_takes_one_swap_fewer_than_its_length():
    start = {h: 100 + h for h in range(32)}
    for length in range(2, 9):
        halves = list(range(1, length + 1))
        copy = Instruction(COPY, None, [Operand(Register(h % length + 1, 16)) for h in halves],
                           {}, [], False, [Register(h, 16) for h in halves])
        lowered = _lowered(copy)
        assert all(ins.attrs.get("tt") == 0x6 for ins in lowered)  # xors only, no scratch
        assert len(lowered) == 3 * (length - 1)
        assert _simulate_sequential(lowered, start) == _simulate_parallel(copy, start)


def test_an_immediate_is_zero_extended_into_a_64_bit_register():
    copy = Instruction(COPY, None, [Operand(Immediate(0xBEEF))], {}, [], False, [Register(4, 64)])
    lowered = _lowered(copy)
    assert [(ins.name, ins.dest, ins.attrs["value"]) for ins in lowered] == [
        ("mov_imm", Register(4, 32), 0xBEEF), ("mov_imm", Register(6, 32), 0)]
