"""The wave interpreter's forwarded, deferred writes give the outcomes of the straightforward
code (every write stored at once, masked; every read from storage), on generated programs
lowered to the exec, vreg and machine levels by the right passes and by wrong ones (whose
stale reads by lanes that were inactive must still show), and on hand-written programs
with divergent masks, wave loops and partial-register overlaps."""

import pytest

from agxir.ir import clone_function
from agxir.machine.lower_cf import structurable
from agxir.machine.pipeline import MACHINE_PASSES
from agxir.text import parse_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.zoo import machine_variants as wrong
from oracles.inputs import InputSet
from oracles.machine import CompiledWave

FUEL = 3000


def _agree(fn, inputs) -> list:
    """Both codegens' outcomes on `fn`, asserted equal; returns them."""
    forwarded = CompiledWave(fn).run(inputs, FUEL)
    direct = CompiledWave(fn, forward=False).run(inputs, FUEL)
    assert forwarded == direct
    return forwarded


def _right(name):
    return MACHINE_PASSES[name].run


# Each route runs its passes in order and compares after every step that yields a wave
# program (every step here: lower-cf comes first).
ROUTES = {
    "machine": [_right("lower-cf"), _right("ra"), _right("lower-phis"), _right("lower-copies")],
    "vreg": [_right("lower-cf"), _right("out-of-ssa"), _right("vreg-ra"), _right("lower-copies")],
    "cf-else-wrong-block": [wrong.else_wrong_block, _right("ra"), _right("lower-phis")],
    "cf-break-wrong-nesting": [wrong.break_wrong_nesting],
    "cf-missing-pop-exec": [wrong.missing_pop_exec],
    "ra-free-at-last-use-in-loop": [_right("lower-cf"), wrong.ra_free_at_last_use_in_loop,
                                    _right("lower-phis"), _right("lower-copies")],
    "copies-swap-as-two-moves": [_right("lower-cf"), _right("ra"), _right("lower-phis"),
                                 wrong.copies_swap_as_two_moves],
    "copies-64-one-half": [_right("lower-cf"), _right("ra"), _right("lower-phis"),
                           wrong.copy_64_one_half],
}


def _cases(count: int, seed: int = 3):
    config = CampaignConfig(seed=seed, pipelines=[])
    cases = (build_case(seed, index, config) for index in range(count))
    return [(fn, inputs[:3]) for fn, inputs in cases if structurable(fn) is None]


CASES = _cases(24)


@pytest.mark.parametrize("route", list(ROUTES))
def test_forwarding_agrees_with_direct_writes_on_generated_programs(route):
    returned = 0
    for fn, inputs in CASES:
        lowered = clone_function(fn)
        for step in ROUTES[route]:
            step(lowered)
            outcomes = _agree(lowered, inputs)
            returned += sum(o.kind == "returned" for o in outcomes)
    assert returned  # the programs ran to their end, not only into undefined behaviour


def test_the_generated_programs_diverge_and_loop():
    """What the agreement above covers: wave loops and masks that split lanes."""
    names = set()
    for fn, _ in CASES:
        lowered = clone_function(fn)
        _right("lower-cf")(lowered)
        names |= {ins.name for ins in lowered.instructions()}
    assert {"jmp_exec_any", "if_icmp", "pop_exec"} <= names
    assert names & {"else_icmp", "else_fcmp"}


def _outputs(text: str, threads: int = 4, **scalars) -> list:
    (outcome,) = _agree(parse_function(text), [InputSet(threads, scalars, {})])
    assert outcome.kind == "returned", outcome
    return [row[0] for row in outcome.outputs]


def test_a_narrow_write_into_a_pending_register_then_a_wide_read():
    text = """\
func.machine @overlap() {
b0:
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x12345678
  r2l = mov r1l
  r3 = iadd r2, #0 shift=0
  r2h = mov_imm value=0x9
  r4 = iadd r2, #0 shift=0
  export r3 slot=0
  export r4 slot=1
  stop
}
"""
    (outcome,) = _agree(parse_function(text), [InputSet(4, {}, {})])
    assert [row for row in outcome.outputs] == [
        (0x12340000 + t, 0x90000 + t) for t in range(4)
    ]


def test_a_register_written_on_one_side_of_an_if_keeps_its_old_value_on_the_other():
    text = """\
func.machine @ifelse() {
b0:
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x7
  r3 = mov_imm value=0x5
  if_icmp r1, #2 cond=ult inv=0 n=1
  r2 = iadd r2, #2 shift=0
  r3 = iadd r2, r3 shift=0
  else_icmp #0, #0 cond=ueq inv=0 n=1
  r2h = mov_imm value=0x1
  r3 = iadd r2, #1 shift=0
  pop_exec n=1
  r3 = iadd r3, r2 shift=0
  export r3 slot=0
  stop
}
"""
    # then lanes: r2 = 9, r3 = 14, then 14 + 9; else lanes: r2 = 0x10007, r3 = 0x10008, + r2
    assert _outputs(text) == [23, 23, 0x2000F, 0x2000F]


def test_a_wave_loop_counts_each_lane_with_pending_writes_across_the_mask_update():
    text = """\
func.machine @loop() {
b0: -> b1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x0
  r3 = mov_imm value=0x0
b1: -> b1
  r2 = iadd r2, #1 shift=0
  r3 = iadd r3, r2 shift=0
  while_icmp r2, r1 cond=ugt inv=1 n=1
  r3 = iadd r3, #100 shift=0
  jmp_exec_any -> b1
  pop_exec n=1
  export r3 slot=0
  stop
}
"""
    # lane t runs t + 1 trips: r3 = 1 + ... + (t + 1), plus 100 on each trip it stayed active
    assert _outputs(text) == [1, 3 + 100, 6 + 200, 10 + 300]



def test_a_unit_that_wakes_lanes_stores_its_names_as_the_straightforward_code_does():
    """v2 is the first unit's alone, written in full first: storing it at the unit's end
    looks unneeded. But lanes 1-3 are active at that end in the first trip, sleep
    through the second unit, and are woken by the first unit's pop_exec in the second
    trip: there they read v2 from storage, which holds the 7 stored at the first
    trip's end (5 if that store were left out)."""
    text = """\
func.vreg @wake() {
b0: -> b1
  r0l = mov_imm value=0x0
  v1:32 = get_sr sr=thread_id
  v9:32 = mov_imm value=0x0
b1: -> b1, b2
  v2:32 = mov_imm value=0x5
  pop_exec n=1
  v3:32 = iadd v2:32, #0 shift=0
  v2:32 = mov_imm value=0x7
  jmp_exec_none -> b2
  v9:32 = iadd v9:32, #1 shift=0
  if_icmp v9:32, #2 cond=ult inv=0 n=1
  if_icmp v1:32, #1 cond=ult inv=0 n=1
  jmp_exec_any -> b1
b2:
  pop_exec n=3
  export v3:32 slot=0
  stop
}
"""
    assert _outputs(text) == [5, 7, 7, 7]
