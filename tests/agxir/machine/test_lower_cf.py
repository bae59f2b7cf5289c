"""Control-flow lowering: the exec-mask form it emits (Mesa's), the canonical CFG it works
on (one stop, one latch, one preheader), what it declines, and agreement with the SSA
program on the wave interpreter for hand-written and generated programs."""

from pathlib import Path

import pytest

from agxir.cfg import CFG
from agxir.ir import clone_function
from agxir.machine.lower_cf import Unstructurable, lower_cf, structurable
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from bench.scale import nested_loops
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.outcomes import Returned, first_difference
from tests.shallow_stack import shallow_stack

GOLDEN = Path(__file__).parents[2] / "golden"

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

TWO_EXITS = """\
func @two_exits(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %zero:32 = mov_imm value=0x0
  jump -> head
head:
  %i:32 = phi [%zero, entry], [%i2, body]
  if_icmp %i, %tid cond=ugt inv=0 -> a, body
body:
  %i2:32 = iadd %i, #1 shift=0
  if_icmp %i2, #5 cond=ult inv=0 -> head, b
a:
  export %i slot=0
  stop
b:
  export %i2 slot=0
  stop
}
"""


def _golden(name: str):
    return parse_function((GOLDEN / "machine" / f"lower_cf_{name}.agx").read_text())


def _outputs(fn, threads: int, **scalars) -> list[int]:
    """Slot 0 of each thread, the exec-level function run on the wave interpreter."""
    (outcome,) = run_wave(fn, [InputSet(threads, scalars)])
    assert isinstance(outcome, Returned), outcome
    return [thread[0] for thread in outcome.outputs]


def _critical_edges(fn) -> list[tuple[str, str]]:
    cfg = CFG(fn)
    return [(a.name, b.name) for a, b in cfg.edges() if len(cfg.succs[a]) > 1 and len(cfg.preds[b]) > 1]


def test_if_else_is_if_then_fresh_else_block_and_a_pop_at_the_end_of_the_else_side():
    fn = parse_function(IF_ELSE)
    assert lower_cf(fn)
    text = print_function(fn)
    assert text.startswith("func.exec @f(u0:32) {\nentry: -> small, else1\n  r0l = mov_imm value=0x0\n")
    assert "  if_icmp %tid, #2 cond=ult inv=0 n=1\nsmall: -> join\n" in text
    assert "else1: -> large\n  else_icmp #0, #0 cond=ueq inv=0 n=1\nlarge: -> join\n" in text
    assert "  %b:32 = iadd %tid, u0 shift=0\n  pop_exec n=1\njoin:\n" in text
    assert "%r:32 = phi [%a, small], [%b, large]" in text
    assert verify(fn) == [] and _critical_edges(fn) == []
    assert _outputs(fn, 4, u0=100) == [200, 201, 102, 103]


def test_an_empty_then_side_gets_a_fresh_block_and_the_phi_follows_it():
    fn = _golden("if_without_else")
    lower_cf(fn)
    entry, then, else_block = fn.blocks[:3]
    assert [b.name for b in entry.successors] == ["then2", "else1"]
    assert then.instructions == [] and else_block.instructions[0].name == "else_icmp"
    join = fn.block_named("join")
    assert [b.name for b in next(join.phis()).blocks] == ["then2", "big"]
    assert _critical_edges(fn) == []


def test_a_do_while_exit_is_while_icmp_and_the_back_edge_gets_its_own_block():
    fn = _golden("do_while")
    lower_cf(fn)
    body = fn.block_named("body")
    assert [ins.name for ins in body.instructions][-1] == "while_icmp"
    assert body.instructions[-1].attrs == {"cond": "ult", "inv": 0, "n": 1}
    cont = fn.block_named("cont2")
    assert [ins.name for ins in cont.instructions] == ["jmp_exec_any", "pop_exec"]
    assert cont.successors == [body] and _critical_edges(fn) == []
    assert _outputs(fn, 8) == [0, 0, 1, 3, 6, 10, 15, 21]


def test_break_nesting_counts_the_ifs_inside_the_innermost_loop():
    fn = _golden("nested_break")
    lower_cf(fn)
    nests = {b.name: ins.attrs["n"] for b in fn.blocks for ins in b.instructions if ins.name == "break"}
    assert nests == {"break3": 3, "break6": 2}  # inside two ifs / inside its own if only
    assert _outputs(fn, 8) == [0, 1, 2, 3, 6, 6, 6, 6]


def test_a_loop_inside_an_if_is_preceded_by_push_exec_and_a_top_level_one_is_not():
    nested = _golden("loop_in_if")
    lower_cf(nested)
    assert [ins.name for ins in nested.block_named("pre2").instructions] == ["push_exec"]
    top = _golden("top_tested")
    lower_cf(top)
    assert top.block_named("pre1").instructions == []


def test_several_back_edges_meet_in_one_fresh_latch():
    fn = _golden("continue")
    lower_cf(fn)
    jumps = [b.name for b in fn.blocks for ins in b.instructions if ins.name == "jmp_exec_any"]
    assert jumps == ["latch1"]
    assert _outputs(fn, 8) == [3, 3, 3, 3, 7, 12, 18, 25]


def test_several_stops_become_one_exit_so_the_wave_ends_once():
    fn = _golden("two_stops")
    lower_cf(fn)
    assert [b.name for b in fn.blocks if any(i.name == "stop" for i in b.instructions)] == ["end1"]
    assert fn.blocks[-1].name == "end1"
    assert _outputs(fn, 4) == [0, 1, 12, 13]


def test_a_function_without_control_flow_gets_no_begin_cf():
    fn = parse_function("func @s(u0:32) {\nb0:\n  export u0 slot=0\n  stop\n}\n")
    lower_cf(fn)
    assert [ins.name for ins in fn.instructions()] == ["export", "stop"]


def test_a_loop_with_two_exit_targets_is_declined_with_where_and_why():
    fn = parse_function(TWO_EXITS)
    before = print_function(fn)
    assert structurable(fn) == "loop head exits to several blocks (a, b)"
    with pytest.raises(Unstructurable, match="loop head exits to several blocks"):
        lower_cf(fn)
    assert print_function(fn) == before


def test_irreducible_cfgs_are_declined_and_left_untouched():
    fn = parse_function((GOLDEN / "irreducible_cfg.agx").read_text())
    before = print_function(fn)
    assert structurable(fn) == "the CFG is irreducible"
    with pytest.raises(Unstructurable):
        lower_cf(fn)
    assert print_function(fn) == before


def test_generated_programs_lower_without_critical_edges_and_agree_with_the_ssa_interpreter():
    config = CampaignConfig(seed=11, pipelines=[])
    lowered = 0
    for index in range(40):
        fn, inputs = build_case(11, index, config)
        if structurable(fn):
            continue
        exec_fn = clone_function(fn)
        lower_cf(exec_fn)
        assert verify(exec_fn) == [], index
        assert _critical_edges(exec_fn) == [], index
        for source, target in zip(CompiledFunction(fn).run(inputs), run_wave(exec_fn, inputs), strict=True):
            if isinstance(source, Returned):
                assert first_difference(source, target) is None, index
        lowered += 1
    assert lowered >= 32  # most generated CFGs are structured


def _nested_ifs(depth: int) -> str:
    """`depth` ifs, each inside the then side of the one before, each merge a phi."""
    lines = ["func @ifs(u0:32) {", "b0:", "  %tid:32 = get_sr sr=thread_id",
             "  if_icmp %tid, #1 cond=ult inv=1 -> b1, j0"]
    for k in range(1, depth):
        lines += [f"b{k}:", f"  if_icmp %tid, u0 cond=ult inv={k % 2} -> b{k + 1}, j{k}"]
    lines += [f"b{depth}:", "  jump -> j" + str(depth - 1)]
    for k in reversed(range(depth)):
        inner = f"b{depth}" if k == depth - 1 else f"j{k + 1}"
        lines += [f"j{k}:", f"  %p{k}:32 = phi [#{k + 7}, b{k}], [#{k}, {inner}]"]
        lines.append(f"  jump -> j{k - 1}" if k else "  export %p0 slot=0\n  stop")
    return "\n".join(lines + ["}"]) + "\n"


@pytest.mark.parametrize("depth", [500, 2000])
def test_deep_loop_nests_lower_without_recursion(depth):
    """Issue 19: 500 nested loops crashed lower-cf with a RecursionError. The walk and the
    merge points are iterative: under a stack of 120 frames a 500- and a 2000-deep nest
    lower, verify, and (500 deep) compute what the SSA program computes."""
    fn = parse_function(nested_loops(depth))
    source = clone_function(fn)
    with shallow_stack():
        assert lower_cf(fn)
        assert [str(e) for e in verify(fn)] == []
    assert fn.level == "exec"
    assert sum(ins.name == "jmp_exec_any" for ins in fn.instructions()) == depth
    assert sum(ins.name == "push_exec" for ins in fn.instructions()) == depth - 1
    if depth == 500:
        # u0 = 0: the lanes leave at once and the wave walks every inner loop once with
        # none active (~10 instructions a loop); at u0 = 1 that walk repeats at every
        # level, ~3.2 x depth^2 wave steps (bench/scale.py's nest, docs/guarantees.md)
        inputs = [InputSet(2, {"u0": 0})]
        (want,) = CompiledFunction(source).run(inputs)
        assert isinstance(want, Returned), want
        with shallow_stack():  # the lowering's copies need more than the SSA's fuel
            (got,) = run_wave(fn, inputs, fuel=100_000)
        assert first_difference(want, got) is None


def test_deep_if_nests_lower_without_recursion():
    fn = parse_function(_nested_ifs(1500))
    assert verify(fn) == []
    source = clone_function(fn)
    with shallow_stack():
        assert lower_cf(fn)
        assert [str(e) for e in verify(fn)] == []
    assert sum(ins.name == "pop_exec" for ins in fn.instructions()) == 1500
    inputs = [InputSet(4, {"u0": 2})]
    (want,) = CompiledFunction(source).run(inputs)
    (got,) = run_wave(fn, inputs)
    assert isinstance(want, Returned) and first_difference(want, got) is None
    assert {t[0] for t in want.outputs} == {7, 0}  # thread 0 skips the nest, the rest leave by j1
