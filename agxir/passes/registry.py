"""The one registry of the model's passes, SSA and machine alike, and the pipelines.

`CONTRACTS` holds every pass's `Contract` (agxir.passes.contract), one line each, listed
explicitly here (nothing registers itself on import); each line names the pass, the levels
it takes and gives, its rule table and its promises, and its place in the pipelines is
computed once from `MACHINE_PIPELINES`. Everything that looks a pass up by name derives
from it: `PASSES` and `RULE_TABLES` (agxir.passes), `MACHINE_PASSES` (agxir.machine.pipeline),
`machine_prefix` and `registered` (fuzz.passes_under_test), the step oracles' name sets
(fuzz.step_oracles). Mesa's passes (fuzz/mesa/, through a C bridge agxir cannot import)
are declared with the same `Contract` in `fuzz.mesa.passes` and composed with these by
`fuzz.passes_under_test.contract_of`. docs/adding-a-pass-and-an-oracle.md says how to add one.

The pipelines: `DEFAULT_PIPELINE` is Mesa's order for these rewrites (the forward pass:
copyprop, then cmpsel and if_cmp fusion on each instruction, then DCE); `ADDRESS_PIPELINE`
is the address-mode pipeline of seed 001; `MESA_OPTIMIZER_PIPELINE` the order Mesa's
optimizer unit tests run (backward, forward, dce), which the mesa_opt_*.agx goldens use; the
machine pipelines take an SSA program to allocated registers.
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
from agxir.passes import (
    address_cleanup,
    address_fold,
    address_fuse,
    address_lower,
    ballot_fuse,
    branch_cmp,
    cmpsel,
    copyprop,
    dce,
    ext_prop,
    fmov_prop,
    fmov_rev,
    inline_imm,
    not_fusion,
    pressure_schedule,
    shift_fuse,
)
from agxir.passes.contract import LOWERS_PRESSURE, PROMOTES_ADDRESS_MATH, Contract, declare, placed
from agxir.passes.pass_ import Pass
from agxir.rewrite import Rule

# --- the pipelines --------------------------------------------------------------------------

DEFAULT_PIPELINE: tuple[str, ...] = ("copyprop", "cmpsel", "branch-cmp", "dce")
# Mesa's optimizer as its unit tests run it (test-optimizer.cpp: agx_optimizer_backward,
# agx_optimizer_forward, agx_dce): the backward fusions, then the forward steps in Mesa's
# per-instruction order (copyprop, fmov, inline_imm, if_not, if_cmp, cmpsel, ballot, not,
# signext), each here a pass over the whole function, then dce. The backward passes count uses
# before anything is rewritten, as Mesa's does.
MESA_OPTIMIZER_PIPELINE: tuple[str, ...] = (
    "fmov-rev", "not-rev",
    "copyprop", "fmov-prop", "inline-imm", "if-not", "branch-cmp", "cmpsel", "ballot-fuse",
    "not-fuse",
    "ext-prop", "dce",
)
# Seed 001's address pipeline: clean up amul chains, fuse leas, fold them into loads and
# stores, lower what is left (the promoted math must not overflow: see oracles/smt/promotion).
ADDRESS_PIPELINE: tuple[str, ...] = (
    "address-cleanup", "address-fuse", "address-fold", "address-lower", "dce",
)

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
# Every machine-level pipeline a default campaign runs; a pass's place (its `prefix`) is in
# the first that holds it.
MACHINE_PIPELINES: tuple[tuple[str, ...], ...] = (
    MACHINE_PIPELINE, VREG_PIPELINE, EXEC_CMP_PIPELINE, REUSE_PIPELINE,
    DEMAND_PIPELINE, OCCUPANCY_PIPELINE,
)

# --- the passes -----------------------------------------------------------------------------

_SSA, _EXEC, _VREG, _MACHINE = "ssa", "exec", "vreg", "machine"
_PROMOTES = frozenset({PROMOTES_ADDRESS_MATH})

# The order is the registry's order: `PASSES` (the SSA passes a default campaign runs each
# alone) lists them in it, then `MACHINE_PASSES`.
_DECLARED: tuple[Contract, ...] = (
    declare(dce.PASS, _SSA, _SSA),  # reachability, not a local rewrite: no rule table
    declare(copyprop.PASS, _SSA, _SSA, copyprop.RULES),
    declare(cmpsel.PASS, _SSA, _SSA, cmpsel.RULES),
    declare(cmpsel.UNIFORM_COMPARE, _SSA, _SSA, cmpsel.UNIFORM_COMPARE_RULES),
    declare(cmpsel.UNIFORM_SELECT, _SSA, _SSA, cmpsel.UNIFORM_SELECT_RULES),
    declare(branch_cmp.PASS, _SSA, _SSA, branch_cmp.RULES),
    declare(address_cleanup.PASS, _SSA, _SSA, address_cleanup.RULES, _PROMOTES),
    declare(address_fuse.PASS, _SSA, _SSA, address_fuse.RULES, _PROMOTES),
    declare(address_fold.PASS, _SSA, _SSA, address_fold.RULES, _PROMOTES),
    declare(address_lower.PASS, _SSA, _SSA, address_lower.RULES, _PROMOTES),
    declare(fmov_prop.PASS, _SSA, _SSA, fmov_prop.RULES),
    declare(fmov_rev.PASS, _SSA, _SSA, fmov_rev.RULES),
    declare(inline_imm.PASS, _SSA, _SSA, inline_imm.RULES),
    declare(not_fusion.FUSE, _SSA, _SSA, not_fusion.FUSE_RULES),
    declare(not_fusion.REV, _SSA, _SSA, not_fusion.REV_RULES),
    declare(not_fusion.IF_NOT, _SSA, _SSA, not_fusion.IF_NOT_RULES),
    declare(ext_prop.PASS, _SSA, _SSA, ext_prop.RULES),
    declare(shift_fuse.PASS, _SSA, _SSA, shift_fuse.RULES),
    declare(ballot_fuse.PASS, _SSA, _SSA, ballot_fuse.RULES),
    declare(pressure_schedule.PASS, _SSA, _SSA, promises=frozenset({LOWERS_PRESSURE})),
    # the machine level
    declare(lower_cf.PASS, _SSA, _EXEC),
    declare(regalloc.PASS, _EXEC, _MACHINE),
    declare(lower_phis.PASS, _MACHINE, _MACHINE),
    declare(lower_copies.PASS, _MACHINE, _MACHINE),
    declare(out_of_ssa.PASS, _EXEC, _VREG),
    declare(vreg_alloc.PASS, _VREG, _MACHINE),
    declare(fuse_exec_cmp.PASS, _MACHINE, _MACHINE),
    declare(reuse_conversion.PASS, _VREG, _VREG),
    declare(regalloc.DEMAND_PASS, _EXEC, _MACHINE),
    declare(regalloc.OCCUPANCY_PASS, _EXEC, _MACHINE),
)

CONTRACTS: dict[str, Contract] = {c.name: placed(c, MACHINE_PIPELINES) for c in _DECLARED}

# --- views, for what looks passes up by level or by promise ------------------------------------

PASSES: dict[str, Pass] = {n: c.as_pass for n, c in CONTRACTS.items() if c.gives == _SSA}
MACHINE_PASSES: dict[str, Pass] = {n: c.as_pass for n, c in CONTRACTS.items() if c.gives != _SSA}
# Each rule-table pass's rules, for the audit that proves them; every rewrite such a pass
# makes comes from one of them.
RULE_TABLES: dict[str, tuple[Rule, ...]] = {
    n: c.rules for n, c in CONTRACTS.items() if c.rules is not None
}


def promising(promise: str) -> frozenset[str]:
    """The registered passes that make `promise`."""
    return frozenset(n for n, c in CONTRACTS.items() if promise in c.promises)
