"""Generated programs as every default pipeline of the campaign leaves them at the exec, vreg
and machine levels, step by step: the inputs the memo and cache tests of the machine oracles
compare their fast paths on (each with the reference program the pipeline lowered and its
input sets)."""

from __future__ import annotations

import argparse
from functools import cache

from agxir.ir import SSA, clone_function
from fuzz.campaign import CampaignConfig
from fuzz.commands.units import units_under_test
from fuzz.generate.cases import build_case


@cache
def pipeline_programs(count: int = 6, seed: int = 5) -> tuple:
    """(pipeline step name, program before the step, program after it, input sets) for every
    step of every default pipeline that leaves a program below SSA, on `count` generated
    programs. A pass that declines a program (unstructurable, over the register file) ends
    that pipeline there."""
    no_flags = argparse.Namespace(passes=None, python_passes=None, pass_commands=None)
    _, pipelines = units_under_test(no_flags)
    config = CampaignConfig(seed=seed, pipelines=pipelines)
    found = []
    for index in range(count):
        fn, inputs = build_case(seed, index, config)
        for pipeline in pipelines:
            current = fn
            for step in pipeline:
                work = clone_function(current)
                try:
                    step.run(work)
                except Exception:  # declined (or a pass's own limits): the pipeline ends
                    break
                if work.level != SSA:
                    found.append((step.name, current, work, inputs[:3]))
                current = work
    return tuple(found)
