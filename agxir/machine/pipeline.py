"""The machine-level passes by name, and the pipeline from SSA to allocated registers.

Filled explicitly here (no registration on import). Each pass is a `Pass` from
`agxir.passes.pass_` living in its own module under `agxir/machine/`.
"""

from __future__ import annotations

from agxir.passes.pass_ import Pass

MACHINE_PASSES: dict[str, Pass] = {}

# SSA -> exec -> machine (Mesa's route: SSA-based RA) and the vreg route (out of SSA first,
# then a vreg allocator), each ending in phi and parallel-copy lowering.
MACHINE_PIPELINE: tuple[str, ...] = ()
VREG_PIPELINE: tuple[str, ...] = ()
