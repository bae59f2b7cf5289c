"""The RA checker judges an allocation without running it."""

from agxir.text import parse_function
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.machine.copy_checker import check_copy_lowering
from oracles.machine.ra_checker import check_allocation

EXEC = """\
func.exec @f(u0:32) {
b0:
  %a:32 = mov_imm value=0x5
  %b:32 = iadd u0, #0 shift=0
  %c:32 = mov_imm value=0x5
  %d:32 = iadd %a, %b shift=0
  export %d slot=0
  export %c slot=1
  stop
}
"""

RIGHT = """\
func.machine @f(u0:32) {
b0:
  r1 = mov_imm value=0x5
  r2 = iadd u0, #0 shift=0
  r3 = mov_imm value=0x5
  r1 = iadd r1, r2 shift=0
  export r1 slot=0
  export r3 slot=1
  stop
}
"""

# %c is given %a's register while %a is still live: every input gives the same outputs,
# because %a and %c are both 5, but %d reads r1 expecting %a and finds %c.
SHARED = """\
func.machine @f(u0:32) {
b0:
  r1 = mov_imm value=0x5
  r2 = iadd u0, #0 shift=0
  r1 = mov_imm value=0x5
  r3 = iadd r1, r2 shift=0
  export r3 slot=0
  export r1 slot=1
  stop
}
"""


def test_a_right_allocation_passes():
    assert check_allocation(parse_function(EXEC), parse_function(RIGHT)) == []


def test_the_checker_alone_catches_a_wrong_allocation_whose_outputs_agree():
    exec_fn, wrong = parse_function(EXEC), parse_function(SHARED)
    inputs = [InputSet(4, {"u0": u}, {}) for u in (0, 1, 0xFFFF, 0x80000000)]
    assert run_wave(wrong, inputs) == CompiledFunction(parse_function(EXEC.replace("func.exec", "func"))).run(inputs)
    errors = check_allocation(exec_fn, wrong)
    assert [str(e) for e in errors][0] == (
        "in b0, `r3 = iadd r1, r2 shift=0`: r1 should hold %a but may hold %c"
    )


def test_an_allocation_that_drops_an_instruction_is_reported_not_a_crash():
    dropped = RIGHT.replace("  r3 = mov_imm value=0x5\n", "")
    assert "stands where the input has" in str(check_allocation(parse_function(EXEC), parse_function(dropped))[0])


def test_values_meet_at_joins_by_intersection():
    exec_fn = parse_function("""\
func.exec @j(u0:32) {
b0: -> b1, b2
  r0l = mov_imm value=0x0
  %a:32 = iadd u0, #1 shift=0
  if_icmp u0, #0 cond=ueq inv=0 n=1
b1: -> b3
  %b:32 = iadd u0, #2 shift=0
b2: -> b3
  else_icmp #0, #0 cond=ueq inv=0 n=1
b3:
  pop_exec n=1
  export %a slot=0
  stop
}
""")
    clobbered_on_one_side = parse_function("""\
func.machine @j(u0:32) {
b0: -> b1, b2
  r0l = mov_imm value=0x0
  r1 = iadd u0, #1 shift=0
  if_icmp u0, #0 cond=ueq inv=0 n=1
b1: -> b3
  r1 = iadd u0, #2 shift=0
b2: -> b3
  else_icmp #0, #0 cond=ueq inv=0 n=1
b3:
  pop_exec n=1
  export r1 slot=0
  stop
}
""")
    (error,) = check_allocation(exec_fn, clobbered_on_one_side)
    assert "r1 should hold %a but may hold nothing the program defined" in str(error)


def test_the_copy_checker_catches_a_cycle_sequentialized_without_a_swap():
    before = parse_function("""\
func.machine @c() {
b0:
  r0l, r0h, r1l = parallel_copy r0h, r1l, r0l
  stop
}
""")
    naive = parse_function("""\
func.machine @c() {
b0:
  r0l = mov r0h
  r0h = mov r1l
  r1l = mov r0l
  stop
}
""")
    (error,) = check_copy_lowering(before, naive)
    assert error == "at the end of b0, r1l does not hold what the parallel copy put there"
