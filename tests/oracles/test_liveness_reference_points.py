"""compare_liveness judges the per-instruction results (kill flags, the set before the first
instruction and after each one), not only block live-in/live-out: two wrong analyses that
keep every block set right are caught, on a hand-written program and on generated ones."""

from agxir.ir import clone_function
from agxir.liveness import Liveness
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.text import parse_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.zoo.analyses import DefinitionsStayLive, KillFlagsDropped
from oracles.liveness_reference import compare_liveness, reference_liveness

PROGRAM = """\
func @f(u0:32) {
entry:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  if_icmp u0, #0 cond=ueq inv=0 -> left, join
left:
  %c:32 = iadd %a, %b shift=0
  jump -> join
join:
  %p:32 = phi [%c, left], [%a, entry]
  %q:32 = iadd %p, #3 shift=0
  export %q slot=0
  stop
}
"""


def block_sets_agree(fn, analysis) -> bool:
    ref = reference_liveness(fn)
    return all(
        analysis.live_in[b] == ref.live_in[b] and analysis.live_out[b] == ref.live_out[b]
        for b in fn.blocks
    ) and analysis.max_pressure == ref.max_pressure


def test_the_right_analysis_agrees_at_every_point():
    fn = parse_function(PROGRAM)
    assert compare_liveness(fn, Liveness(fn)) is None


def test_dropped_kill_flags_are_caught_though_every_block_set_is_right():
    fn = parse_function(PROGRAM)
    wrong = KillFlagsDropped(fn)
    assert block_sets_agree(fn, wrong)
    assert compare_liveness(fn, wrong) == (
        "kills[left, instruction 0 (%c = iadd)]: analysis is missing %b"
    )


def test_a_value_live_above_its_definition_is_caught_though_every_block_set_is_right():
    fn = parse_function(PROGRAM)
    wrong = DefinitionsStayLive(fn)
    assert block_sets_agree(fn, wrong)
    right = Liveness(fn)
    assert all(wrong.kills[i] == right.kills[i] for i in fn.instructions())
    assert compare_liveness(fn, wrong) == (
        "live before [entry, instruction 0 (%a = iadd)]: analysis has extra %a, %b"
    )


def test_both_are_caught_on_generated_exec_level_programs():
    config = CampaignConfig(seed=3, pipelines=[])
    caught = {KillFlagsDropped: 0, DefinitionsStayLive: 0}
    checked = 0
    for index in range(25):
        fn, _ = build_case(3, index, config)
        if structurable(fn):
            continue
        exec_fn = clone_function(fn)
        lower_cf(exec_fn)
        for program in (fn, exec_fn):
            reference = reference_liveness(program)
            assert compare_liveness(program, Liveness(program), reference) is None, index
            for variant in caught:
                analysis = variant(program)
                assert block_sets_agree(program, analysis), index
                caught[variant] += compare_liveness(program, analysis, reference) is not None
        checked += 1
    assert checked >= 10
    assert caught[DefinitionsStayLive] == 2 * checked  # every program defines something
    assert caught[KillFlagsDropped] > 0
