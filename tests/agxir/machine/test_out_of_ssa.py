"""Out of SSA into virtual registers: conventional-SSA copies (lost-copy and swap
problems), copies at the logical end of predecessors and after a leading else, critical
edges split where the layout allows, and agreement on the wave interpreter."""

from pathlib import Path

import pytest

from agxir.ir import Instruction, Value, VirtualRegister, clone_function
from agxir.machine.lower_cf import lower_cf, structurable
from agxir.machine.out_of_ssa import PARALLEL_COPY, logical_end, out_of_ssa, split_critical_edges
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.outcomes import Returned, first_difference

GOLDEN = Path(__file__).parents[2] / "golden" / "machine"


def _golden(name: str):
    return parse_function((GOLDEN / f"{name}.agx").read_text())


def _slot0(fn, threads: int) -> list[int]:
    (outcome,) = run_wave(fn, [InputSet(threads)])
    assert isinstance(outcome, Returned), outcome
    return [thread[0] for thread in outcome.outputs]


def _naive_out_of_ssa(fn) -> None:
    """Phi destinations written directly at the end of each predecessor: what the fresh
    vregs of conventional SSA are there to avoid."""
    vregs = {value: VirtualRegister(i + 1, value.size) for i, value in enumerate(fn.values())}

    def operand(src):
        return src.with_ref(vregs[src.ref]) if isinstance(src.ref, Value) else src

    for block in fn.blocks:
        phis = list(block.phis())
        for phi in phis:
            for src, pred in zip(phi.srcs, phi.blocks, strict=True):
                copy = Instruction(PARALLEL_COPY, None, [operand(src)], {}, [], False, [vregs[phi.dest]])
                pred.instructions.insert(logical_end(pred), copy)
        block.instructions = block.instructions[len(phis):]
    for ins in fn.instructions():
        ins.srcs = [operand(src) for src in ins.srcs]
        if isinstance(ins.dest, Value):
            ins.dest = vregs[ins.dest]
    fn.level = "vreg"


def test_the_lost_copy_is_avoided_where_writing_the_phi_destination_directly_is_wrong():
    expected = [0, 0, 1, 2]
    fn = _golden("out_of_ssa_lost_copy")
    assert _slot0(fn, 4) == expected
    naive = clone_function(fn)
    _naive_out_of_ssa(naive)
    assert _slot0(naive, 4) != expected  # the leaving lanes lose %x
    assert out_of_ssa(fn) and fn.level == "vreg" and verify(fn) == []
    assert _slot0(fn, 4) == expected


def test_phis_of_one_block_act_in_parallel_through_one_copy_per_edge_and_one_at_entry():
    fn = _golden("out_of_ssa_swap")
    lower_cf(fn)
    out_of_ssa(fn)
    loop = fn.block_named("loop")
    entry_copy = loop.instructions[0]
    assert entry_copy.name == "parallel_copy" and len(entry_copy.dests) == 3
    back = fn.block_named("cont2").instructions[0]
    assert back.name == "parallel_copy"
    # the back edge swaps a and b: each temp takes the other phi's register
    assert [s.ref for s in back.srcs[:2]] == [entry_copy.dests[1], entry_copy.dests[0]]
    assert [d for d in back.dests] == [s.ref for s in entry_copy.srcs]
    assert verify(fn) == []
    (outcome,) = run_wave(fn, [InputSet(4)])
    assert [t[0] for t in outcome.outputs] == [10, 10, 20, 10]
    assert [t[1] for t in outcome.outputs] == [20, 20, 10, 20]


def test_an_empty_else_takes_its_copy_between_the_else_and_the_pop():
    fn = _golden("out_of_ssa_empty_else")
    lower_cf(fn)
    out_of_ssa(fn)
    names = [ins.name for ins in fn.block_named("else1").instructions]
    assert names == ["else_icmp", "parallel_copy", "pop_exec"]
    (outcome,) = run_wave(fn, [InputSet(4, {"u0": 100})])
    assert [t[0] for t in outcome.outputs] == [100, 101, 2, 3]


def test_a_critical_edge_is_split_where_the_layout_allows_it():
    fn = _golden("out_of_ssa_split_edge")
    assert split_critical_edges(clone_function(fn)) == 1
    out_of_ssa(fn)
    split = fn.block_named("split1")
    assert fn.blocks[1] is split and fn.entry.successors[0] is split
    assert [ins.name for ins in split.instructions] == ["parallel_copy"]
    assert verify(fn) == [] and _slot0(fn, 5) == [1, 1, 2, 3, 4]


def test_out_of_ssa_takes_only_exec_level_functions():
    fn = _golden("out_of_ssa_empty_else")
    with pytest.raises(ValueError, match="exec-level"):
        out_of_ssa(fn)


def test_generated_programs_go_out_of_ssa_and_agree_with_the_ssa_interpreter():
    config = CampaignConfig(seed=23, pipelines=[])
    checked = 0
    for index in range(40):
        fn, inputs = build_case(23, index, config)
        if structurable(fn):
            continue
        work = clone_function(fn)
        lower_cf(work)
        assert split_critical_edges(clone_function(work)) == 0, index
        out_of_ssa(work)
        assert verify(work) == [], index
        assert not any(ins.is_phi for ins in work.instructions()), index
        assert not any(isinstance(s.ref, Value) for ins in work.instructions() for s in ins.srcs)
        for source, target in zip(CompiledFunction(fn).run(inputs), run_wave(work, inputs), strict=True):
            if isinstance(source, Returned):
                assert first_difference(source, target) is None, index
        checked += 1
    assert checked >= 30

