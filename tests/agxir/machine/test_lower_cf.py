"""Control-flow lowering: the exec-mask form it emits, what it declines, and agreement with
the SSA program on the wave interpreter for generated programs."""

import pytest

from agxir.ir import clone_function
from agxir.machine.lower_cf import Unstructurable, lower_cf, structurable
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig, build_case
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.outcomes import Returned, first_difference

IF_ELSE = """\
func @f(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  if_icmp %tid, #2 cond=ult inv=0 -> small, large
small:
  %a:32 = iadd %tid, u0 shift=1
  jump -> join
large:
  %b:32 = iadd %tid, u0 shift=0
  jump -> join
join:
  %r:32 = phi [%a, small], [%b, large]
  export %r slot=0
  stop
}
"""


def test_if_else_becomes_if_else_pop_with_fresh_else_and_pop_blocks():
    fn = parse_function(IF_ELSE)
    assert lower_cf(fn)
    text = print_function(fn)
    assert text.startswith("func.exec @f(u0:32) {\nentry: -> small, else2\n  r0l = mov_imm value=0x0\n")
    assert "  if_icmp %tid, #2 cond=ult inv=0 n=1\n" in text
    assert "else2: -> large\n  else_icmp #0, #0 cond=ueq inv=0 n=1\n" in text
    assert "pop1: -> join\n  pop_exec n=1\n" in text
    assert "%r:32 = phi [%a, small], [%b, pop1]" in text
    assert verify(fn) == []


def test_a_loop_exit_is_a_break_and_the_latch_ends_in_jmp_exec_any_then_pop():
    fn = parse_function(open("tests/golden/loop_prefix_sum.agx").read())
    lower_cf(fn)
    text = print_function(fn)
    assert "  break n=2\n" in text
    assert "  jmp_exec_any -> loop\n  pop_exec n=1\n" in text
    assert verify(fn) == []


def test_irreducible_cfgs_are_declined_with_a_reason_and_left_untouched():
    fn = parse_function(open("tests/golden/irreducible_cfg.agx").read())
    before = print_function(fn)
    assert structurable(fn) == "the CFG is irreducible"
    with pytest.raises(Unstructurable):
        lower_cf(fn)
    assert print_function(fn) == before


def test_generated_programs_lower_and_agree_with_the_ssa_interpreter():
    config = CampaignConfig(seed=11, pipelines=[])
    lowered = 0
    for index in range(40):
        fn, inputs = build_case(11, index, config)
        if structurable(fn):
            continue
        exec_fn = clone_function(fn)
        lower_cf(exec_fn)
        assert verify(exec_fn) == [], index
        for source, target in zip(CompiledFunction(fn).run(inputs), run_wave(exec_fn, inputs), strict=True):
            if isinstance(source, Returned):
                assert first_difference(source, target) is None, index
        lowered += 1
    assert lowered >= 25  # most generated CFGs are structured
