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


def default_pipelines() -> list:
    """The default campaign's pipelines, as `agxfuzz run` builds them with no flags."""
    no_flags = argparse.Namespace(passes=None, python_passes=None, pass_commands=None)
    return units_under_test(no_flags)[1]


def pipeline_steps(fn, pipelines):
    """(step, program before it, program after it) for every step of every pipeline run on
    a clone of `fn`, in order; a pass that declines a program (unstructurable, over the
    register file) or raises ends that pipeline there."""
    for pipeline in pipelines:
        current = fn
        for step in pipeline:
            work = clone_function(current)
            try:
                step.run(work)
            except Exception:  # declined (or a pass's own limits): the pipeline ends
                break
            yield step, current, work
            current = work


@cache
def pipeline_programs(count: int = 6, seed: int = 5) -> tuple:
    """(pipeline step name, program before the step, program after it, input sets) for every
    step of every default pipeline that leaves a program below SSA, on `count` generated
    programs. A pass that declines a program (unstructurable, over the register file) ends
    that pipeline there."""
    pipelines = default_pipelines()
    config = CampaignConfig(seed=seed, pipelines=pipelines)
    found = []
    for index in range(count):
        fn, inputs = build_case(seed, index, config)
        for step, before, after in pipeline_steps(fn, pipelines):
            if after.level != SSA:
                found.append((step.name, before, after, inputs[:3]))
    return tuple(found)
