"""The vreg route: out-of-SSA into virtual registers, then the graph-colouring allocator."""

from agxir.ir import VirtualRegister, clone_function
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.machine.out_of_ssa import out_of_ssa
from agxir.machine.vreg_alloc import interference, vreg_ra
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.machine.ra_checker import check_allocation
from oracles.outcomes import Returned, first_difference


def test_phis_become_one_parallel_copy_per_edge_before_trailing_control():
    fn = parse_function(open("tests/golden/phi_swap_parallel.agx").read())
    lower_cf(fn)
    out_of_ssa(fn)
    text = print_function(fn)
    assert fn.level == "vreg" and " phi " not in text
    copies = [ins for ins in fn.instructions() if ins.name == "parallel_copy"]
    assert copies and all(len(c.dests) == len(c.srcs) for c in copies)
    assert verify(fn) == []


def test_values_live_at_once_interfere_and_get_different_registers():
    fn = parse_function("""\
func.vreg @i(u0:32) {
b0:
  v1:32 = iadd u0, #1 shift=0
  v2:32 = iadd u0, #2 shift=0
  v3:32 = iadd v1:32, v2:32 shift=0
  export v3:32 slot=0
  stop
}
""")
    graph = interference(fn)
    assert VirtualRegister(2, 32) in graph[VirtualRegister(1, 32)]
    assert VirtualRegister(3, 32) not in graph[VirtualRegister(1, 32)]
    vreg_ra(fn)
    registers = [ins.dest for ins in fn.instructions() if ins.dest is not None]
    assert registers[0] != registers[1]


def test_generated_programs_agree_and_pass_the_ra_checker_through_the_vreg_route():
    config = CampaignConfig(seed=31, pipelines=[])
    checked = 0
    for index in range(40):
        fn, inputs = build_case(31, index, config)
        if structurable(fn):
            continue
        vreg_fn = clone_function(fn)
        lower_cf(vreg_fn)
        out_of_ssa(vreg_fn)
        allocated = clone_function(vreg_fn)
        vreg_ra(allocated)
        assert verify(vreg_fn) == [] and verify(allocated) == [], index
        assert check_allocation(vreg_fn, allocated) == [], index
        for source, target in zip(CompiledFunction(fn).run(inputs), run_wave(allocated, inputs), strict=True):
            if isinstance(source, Returned):
                assert first_difference(source, target) is None, index
        checked += 1
    assert checked >= 25
