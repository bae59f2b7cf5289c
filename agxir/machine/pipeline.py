"""The machine-level passes by name, and the pipelines from SSA to allocated registers.

Views of the one registry of passes (`agxir.passes.registry`, where each machine pass is
declared with its contract and the pipelines are written): `MACHINE_PASSES` is the passes
that leave a function below SSA. `ALTERNATIVES` is this module's own: which tight-bound
pipeline a campaign draws per program.
"""

from __future__ import annotations

from agxir.passes.registry import (
    DEMAND_PIPELINE,
    EXEC_CMP_PIPELINE,
    MACHINE_PASSES,
    MACHINE_PIPELINE,
    MACHINE_PIPELINES,
    OCCUPANCY_PIPELINE,
    REUSE_PIPELINE,
    VREG_PIPELINE,
)

__all__ = [
    "ALTERNATIVES", "DEMAND_PIPELINE", "EXEC_CMP_PIPELINE", "MACHINE_PASSES", "MACHINE_PIPELINE",
    "MACHINE_PIPELINES", "OCCUPANCY_PIPELINE", "REUSE_PIPELINE", "VREG_PIPELINE",
]  # fmt: skip

# Pipelines a campaign runs one of per program, with weights: which one is drawn from the
# program's seed (`fuzz.campaign`), so each program is allocated at one tight bound and
# the cost is one pipeline's. A campaign holding only one of them runs it on every program.
# The occupancy step is tight only for a demand near the top of a step (most generated
# programs need fewer than 104 halves, the first step), so it gets the smaller share.
ALTERNATIVES: tuple[tuple[tuple[str, ...], int], ...] = (
    (DEMAND_PIPELINE, 9), (OCCUPANCY_PIPELINE, 1),
)
