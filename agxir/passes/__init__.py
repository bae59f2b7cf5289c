"""Optimisation passes over the IR, modelled on Mesa's AGX optimizer, and their registry.

`PASSES` lists every pass explicitly (nothing registers itself on import).
`DEFAULT_PIPELINE` is Mesa's order for these rewrites: the forward pass (copyprop, then
cmpsel and if_cmp fusion on each instruction) followed by DCE; `ADDRESS_PIPELINE` is the
address-mode pipeline of seed 001; `MESA_OPTIMIZER_PIPELINE` is the order Mesa's optimizer
unit tests run (backward, forward, dce), which the mesa_opt_*.agx goldens use. Each pass rewrites a
function in place and reports whether it changed anything; run passes on
`ir.clone_function(fn)` to keep the original.

`RULE_TABLES` maps each rule-table pass to its rules (`agxir.rewrite.Rule`), for the audit
that proves them; every rewrite a pass makes comes from one of these rules. `dce` is not in
it: it is a reachability algorithm, not a local rewrite.
"""

from __future__ import annotations

from agxir.ir import Function
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
from agxir.passes.pass_ import Pass
from agxir.rewrite import Rule

__all__ = [
    "ADDRESS_PIPELINE", "DEFAULT_PIPELINE", "MESA_OPTIMIZER_PIPELINE", "PASSES", "RULE_TABLES", "Pass", "UnknownPass", "get_pass",
    "run_pipeline",
]  # fmt: skip

PASSES: dict[str, Pass] = {
    p.name: p
    for p in (
        dce.PASS,
        copyprop.PASS,
        cmpsel.PASS,
        cmpsel.UNIFORM_COMPARE,
        cmpsel.UNIFORM_SELECT,
        branch_cmp.PASS,
        address_cleanup.PASS,
        address_fuse.PASS,
        address_fold.PASS,
        address_lower.PASS,
        fmov_prop.PASS,
        fmov_rev.PASS,
        inline_imm.PASS,
        not_fusion.FUSE,
        not_fusion.REV,
        not_fusion.IF_NOT,
        ext_prop.PASS,
        shift_fuse.PASS,
        ballot_fuse.PASS,
        pressure_schedule.PASS,
    )
}

RULE_TABLES: dict[str, tuple[Rule, ...]] = {
    copyprop.PASS.name: copyprop.RULES,
    cmpsel.PASS.name: cmpsel.RULES,
    cmpsel.UNIFORM_COMPARE.name: cmpsel.UNIFORM_COMPARE_RULES,
    cmpsel.UNIFORM_SELECT.name: cmpsel.UNIFORM_SELECT_RULES,
    branch_cmp.PASS.name: branch_cmp.RULES,
    address_cleanup.PASS.name: address_cleanup.RULES,
    address_fuse.PASS.name: address_fuse.RULES,
    address_fold.PASS.name: address_fold.RULES,
    address_lower.PASS.name: address_lower.RULES,
    fmov_prop.PASS.name: fmov_prop.RULES,
    fmov_rev.PASS.name: fmov_rev.RULES,
    inline_imm.PASS.name: inline_imm.RULES,
    not_fusion.FUSE.name: not_fusion.FUSE_RULES,
    not_fusion.REV.name: not_fusion.REV_RULES,
    not_fusion.IF_NOT.name: not_fusion.IF_NOT_RULES,
    ext_prop.PASS.name: ext_prop.RULES,
    shift_fuse.PASS.name: shift_fuse.RULES,
    ballot_fuse.PASS.name: ballot_fuse.RULES,
}

DEFAULT_PIPELINE: tuple[str, ...] = ("copyprop", "cmpsel", "branch-cmp", "dce")
# Seed 001's address pipeline: clean up amul chains, fuse leas, fold them into loads and
# stores, lower what is left (the promoted math must not overflow: see oracles/smt/promotion).
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
ADDRESS_PIPELINE: tuple[str, ...] = (
    "address-cleanup", "address-fuse", "address-fold", "address-lower", "dce",
)


class UnknownPass(KeyError):
    """A pass name that is not in `PASSES`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.message = f"unknown pass {name!r}; known passes: {', '.join(PASSES)}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would print the message quoted, as a repr
        return self.message


def get_pass(name: str) -> Pass:
    try:
        return PASSES[name]
    except KeyError:
        raise UnknownPass(name) from None


def run_pipeline(fn: Function, names) -> list[tuple[str, bool]]:
    """Run the named passes in order on `fn` (in place); each name with whether it changed
    `fn`. Every name is looked up first, so an unknown one leaves `fn` untouched."""
    if isinstance(names, str):
        raise TypeError("run_pipeline takes a sequence of pass names, not one string")
    passes = [get_pass(name) for name in names]
    return [(p.name, p.run(fn)) for p in passes]
