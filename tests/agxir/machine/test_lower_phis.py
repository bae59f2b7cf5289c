"""Phi lowering: register phis become one parallel copy per logical predecessor, before the
predecessor's trailing control flow, acting in parallel, with moves to themselves dropped."""

import pytest

from agxir.ir import Immediate, Register, clone_function
from agxir.machine.lower_cf import lower_cf
from agxir.machine.lower_copies import lower_copies
from agxir.machine.lower_phis import lower_phis
from agxir.machine.regalloc import run_ra
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import random_input_sets
from oracles.interp import CompiledFunction
from oracles.machine import run_wave

PHIS = """\
func.machine @p(u0:32) {
entry: -> small, else1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = iadd r1, #7 shift=0
  if_icmp r1, #2 cond=ult inv=0 n=1
small: -> join
  r3 = iadd r1, u0 shift=1
else1: -> large
  else_icmp #0, #0 cond=ueq inv=0 n=1
large: -> join
  r3 = iadd r1, u0 shift=0
  pop_exec n=1
join:
  r2 = phi [r3, small], [r2, large]
  r3 = phi [r2, small], [#9, large]
  export r2 slot=0
  export r3 slot=1
  stop
}
"""


def test_each_predecessor_gets_one_parallel_copy_before_its_trailing_control():
    fn = parse_function(PHIS)
    assert lower_phis(fn)
    small, large, join = (fn.block_named(n) for n in ("small", "large", "join"))
    assert not any(ins.is_phi for ins in join.instructions)
    swap = small.instructions[-1]
    assert swap.name == "parallel_copy"
    # Both phis of the edge in one copy: r2 and r3 swap, they are not two moves.
    assert swap.dests == [Register(4, 32), Register(6, 32)]
    assert [s.ref for s in swap.srcs] == [Register(6, 32), Register(4, 32)]
    # r2 = r2 on the edge from large is dropped; the immediate stays; the pop stays last.
    assert [ins.name for ins in large.instructions] == ["iadd", "parallel_copy", "pop_exec"]
    copy = large.instructions[1]
    assert copy.dests == [Register(6, 32)] and copy.srcs[0].ref == Immediate(9)
    assert verify(fn) == []


def test_the_lowered_program_computes_what_the_register_phis_did():
    fn = parse_function(PHIS)
    inputs = random_input_sets(fn, 4, 11, 3)
    expected = run_wave(fn, inputs)
    lowered = clone_function(fn)
    lower_phis(lowered)
    assert run_wave(lowered, inputs) == expected
    lower_copies(lowered)
    assert run_wave(lowered, inputs) == expected


def test_a_swap_of_phis_in_a_loop_survives_allocation_and_lowering():
    source = parse_function(open("tests/golden/phi_swap_parallel.agx").read())
    fn = clone_function(source)
    lower_cf(fn)
    run_ra(fn)
    assert lower_phis(fn) and " phi " not in print_function(fn)
    lower_copies(fn)
    inputs = random_input_sets(source, 8, 2, 3)
    assert run_wave(fn, inputs) == CompiledFunction(source).run(inputs)


def test_no_phis_no_change_and_other_levels_are_refused():
    fn = parse_function(PHIS.replace("  r2 = phi [r3, small], [r2, large]\n", "")
                        .replace("  r3 = phi [r2, small], [#9, large]\n", ""))
    text = print_function(fn)
    assert not lower_phis(fn) and print_function(fn) == text
    exec_fn = parse_function("func.exec @e() {\nb0:\n  stop\n}\n")
    with pytest.raises(ValueError, match="machine-level"):
        lower_phis(exec_fn)


def test_a_critical_edge_is_an_error_not_a_copy_for_the_wrong_lanes():
    fn = parse_function("""\
func.machine @c(u0:32) {
entry: -> then, join
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  if_icmp r1, #2 cond=ult inv=0 n=1
then: -> join
  r2 = iadd r1, u0 shift=0
  pop_exec n=1
join:
  r3 = phi [r1, entry], [r2, then]
  export r3 slot=0
  stop
}
""")
    with pytest.raises(ValueError, match="critical edge entry -> join"):
        lower_phis(fn)


def test_an_empty_else_side_takes_its_copy_after_the_else_not_before():
    """Before the else_icmp the mask is still the then side's: a copy there would run for
    the wrong lanes."""
    fn = parse_function("""\
func.machine @e(u0:32) {
entry: -> small, else1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  if_icmp r1, #2 cond=ult inv=0 n=1
small: -> join
  r2 = iadd r1, u0 shift=1
else1: -> join
  else_icmp #0, #0 cond=ueq inv=0 n=1
  pop_exec n=1
join:
  r2 = phi [r2, small], [r1, else1]
  export r2 slot=0
  stop
}
""")
    inputs = random_input_sets(fn, 4, 5, 2)
    expected = run_wave(fn, inputs)
    lower_phis(fn)
    assert [ins.name for ins in fn.block_named("else1").instructions] == [
        "else_icmp", "parallel_copy", "pop_exec"]
    assert fn.block_named("small").instructions[-1].name == "iadd"  # r2 = r2: no copy
    lower_copies(fn)
    assert run_wave(fn, inputs) == expected
