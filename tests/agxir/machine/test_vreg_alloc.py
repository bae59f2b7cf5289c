"""The vreg allocator (`vreg-ra`): liveness of non-SSA virtual registers over the logical CFG
(back edges included), interference, alignment, r0l, the bound, copy affinities, and
generated programs through out-of-SSA under the RA checker and the wave interpreter."""

import pytest

from agxir.ir import R0L, Register, VirtualRegister, clone_function
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.machine.lower_copies import lower_copies
from agxir.machine.out_of_ssa import out_of_ssa
from agxir.machine.pipeline import MACHINE_PASSES
from agxir.machine.regalloc import RegisterBoundExceeded
from agxir.machine.vreg_alloc import colour, interference, vreg_liveness, vreg_ra
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import random_input_sets
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.machine.ra_checker import check_allocation
from oracles.outcomes import Returned, first_difference

# v1 is live around the back edge (read at the end of every iteration), so v4 and v5,
# defined in the body, must not share its register. v2 and v3 are written twice (not SSA):
# v2 is dead between its read at the top of the body and its write at the end, so v5 may
# take its register. v9 is written in the entry and again after the loop.
LOOP = """\
func.vreg @l(u0:32) {
b0: -> b1
  r0l = mov_imm value=0x0
  v1:32 = get_sr sr=thread_id
  v2:32 = mov_imm value=0x0
  v3:32 = mov_imm value=0x0
  v9:16 = mov_imm value=0x1
b1: -> b2, b3
  v4:32 = iadd v2:32, v3:32 shift=0
  v5:32 = iadd v3:32, #1 shift=0
  v2:32, v3:32 = parallel_copy v4:32, v5:32
  while_icmp v3:32, v1:32 cond=ugt inv=1 n=1
b2: -> b1
  jmp_exec_any -> b1
  pop_exec n=1
b3:
  v9:16 = mov_imm value=0x2
  export v2:32 slot=0
  export v9:16 slot=1
  stop
}
"""


def _v(index: int, size: int = 32) -> VirtualRegister:
    return VirtualRegister(index, size)


def test_liveness_follows_back_edges():
    fn = parse_function(LOOP)
    live_out = vreg_liveness(fn)
    b0, b1, b2, b3 = fn.blocks
    assert live_out[b2] == {_v(1), _v(2), _v(3)}
    assert live_out[b0] == {_v(1), _v(2), _v(3)}
    assert live_out[b1] == {_v(1), _v(2), _v(3)}
    assert live_out[b3] == set()
    graph = interference(fn)
    assert _v(1) in graph[_v(4)] and _v(1) in graph[_v(5)] and _v(3) in graph[_v(4)]
    assert _v(2) not in graph[_v(5)]


def test_registers_are_aligned_r0l_reserved_and_copies_coalesced():
    fn = parse_function(LOOP)
    assigned = colour(fn)
    assert all(r.aligned and r.size == v.size for v, r in assigned.items())
    assert all(not r.overlaps(R0L) for r in assigned.values())
    assert assigned[_v(5)] != assigned[_v(1)] and assigned[_v(4)] != assigned[_v(1)]
    # v2 = v4 and v3 = v5 can share registers: the parallel copy then moves nothing.
    assert assigned[_v(2)] == assigned[_v(4)] and assigned[_v(3)] == assigned[_v(5)]
    allocated = clone_function(fn)
    assert MACHINE_PASSES["vreg-ra"].run(allocated)
    assert allocated.level == "machine" and verify(allocated) == []
    assert check_allocation(fn, allocated) == []
    lower_copies(allocated)
    inputs = random_input_sets(fn, 8, 4, 2)
    assert run_wave(allocated, inputs) == run_wave(fn, inputs)


def test_a_bound_too_small_is_an_error():
    with pytest.raises(RegisterBoundExceeded, match="within 6 halves"):
        vreg_ra(parse_function(LOOP), bound=6)
    fn = parse_function(LOOP)
    vreg_ra(fn, bound=8)
    assert max(h for ins in fn.instructions() for r in ins.defs() for h in r.halves) < 8


def test_values_live_at_once_interfere_and_a_dead_definition_still_gets_a_register():
    fn = parse_function("""\
func.vreg @i(u0:32) {
b0:
  v1:64 = u2u64 u0
  v2:16 = mov_imm value=0x3
  v3:32 = iadd u0, #2 shift=0
  v4:64 = iadd v1:64, v3:32 shift=0
  export v4:64 slot=0
  export v2:16 slot=2
  stop
}
""")
    assigned = colour(fn)
    assert assigned[_v(1, 64)] == Register(0, 64) or assigned[_v(1, 64)].half % 4 == 0
    live = [assigned[_v(1, 64)], assigned[_v(2, 16)], assigned[_v(3)]]
    assert not any(a.overlaps(b) for i, a in enumerate(live) for b in live[i + 1:])
    assert not assigned[_v(4, 64)].overlaps(assigned[_v(2, 16)])


def test_generated_programs_through_out_of_ssa_agree_and_pass_the_checker():
    config = CampaignConfig(seed=44, pipelines=[])
    checked = 0
    for index in range(30):
        fn, inputs = build_case(44, index, config)
        if structurable(fn):
            continue
        vreg_fn = clone_function(fn)
        lower_cf(vreg_fn)
        out_of_ssa(vreg_fn)
        allocated = clone_function(vreg_fn)
        vreg_ra(allocated)
        assert verify(allocated) == [] and check_allocation(vreg_fn, allocated) == [], index
        lower_copies(allocated)
        for source, target in zip(CompiledFunction(fn).run(inputs), run_wave(allocated, inputs),
                                  strict=True):
            if isinstance(source, Returned):
                assert first_difference(source, target) is None, index
        checked += 1
    assert checked >= 20
