"""The machine-level passes by name, and the pipeline from SSA to allocated registers.

Filled explicitly here (no registration on import). Each pass is a `Pass` from
`agxir.passes.pass_` living in its own module under `agxir/machine/`.
"""

from __future__ import annotations

from agxir.machine import (
    fuse_exec_cmp,
    lower_cf,
    lower_copies,
    lower_phis,
    out_of_ssa,
    regalloc,
    reuse_conversion,
    vreg_alloc,
)
from agxir.passes.pass_ import Pass

MACHINE_PASSES: dict[str, Pass] = {
    p.name: p
    for p in (
        lower_cf.PASS, regalloc.PASS, lower_phis.PASS, lower_copies.PASS,
        out_of_ssa.PASS, vreg_alloc.PASS, fuse_exec_cmp.PASS, reuse_conversion.PASS,
        regalloc.DEMAND_PASS, regalloc.OCCUPANCY_PASS,
    )
}

# SSA -> exec -> machine (Mesa's route: SSA-based RA), ending in phi and parallel-copy
# lowering; and the vreg route (out of SSA first, then a vreg allocator), for vreg-level
# passes.
MACHINE_PIPELINE: tuple[str, ...] = ("lower-cf", "ra", "lower-phis", "lower-copies")
VREG_PIPELINE: tuple[str, ...] = ("lower-cf", "out-of-ssa", "vreg-ra", "lower-copies")
# The register-level passes under test, each where it acts: seed 003's compare fusion on
# the allocated, copy-lowered program; seed 002's conversion reuse on virtual registers,
# before the vreg allocator.
EXEC_CMP_PIPELINE: tuple[str, ...] = (*MACHINE_PIPELINE, "fuse-exec-cmp")
REUSE_PIPELINE: tuple[str, ...] = (
    "lower-cf", "out-of-ssa", "reuse-conversion", "vreg-ra", "lower-copies",
)
# Mesa's route at tight register bounds, where the allocator evicts and fixes up entry
# maps: the demand rounded up to a quad (Mesa's AGX_MESA_DEBUG=demand), and the top of
# the demand's occupancy step (Mesa's own sizing).
DEMAND_PIPELINE: tuple[str, ...] = ("lower-cf", "ra-demand", "lower-phis", "lower-copies")
OCCUPANCY_PIPELINE: tuple[str, ...] = ("lower-cf", "ra-occupancy", "lower-phis", "lower-copies")
# Every machine-level pipeline a default campaign runs; `machine_prefix` finds a pass in
# the first that holds it.
MACHINE_PIPELINES: tuple[tuple[str, ...], ...] = (
    MACHINE_PIPELINE, VREG_PIPELINE, EXEC_CMP_PIPELINE, REUSE_PIPELINE,
    DEMAND_PIPELINE, OCCUPANCY_PIPELINE,
)
# Pipelines a campaign runs one of per program, with weights: which one is drawn from the
# program's seed (`fuzz.campaign`), so each program is allocated at one tight bound and
# the cost is one pipeline's. A campaign holding only one of them runs it on every program.
# The occupancy step is tight only for a demand near the top of a step (most generated
# programs need fewer than 104 halves, the first step), so it gets the smaller share.
ALTERNATIVES: tuple[tuple[tuple[str, ...], int], ...] = (
    (DEMAND_PIPELINE, 9), (OCCUPANCY_PIPELINE, 1),
)
