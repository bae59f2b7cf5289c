"""Optimisation passes over the IR, modelled on Mesa's AGX optimizer, and their registry.

`PASSES` lists every pass explicitly (nothing registers itself on import).
`DEFAULT_PIPELINE` is Mesa's order for these rewrites: the forward pass (copyprop, then
cmpsel and if_cmp fusion on each instruction) followed by DCE; `ADDRESS_PIPELINE` is the
address-mode pipeline of seed 001. Each pass rewrites a
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
    branch_cmp,
    cmpsel,
    copyprop,
    dce,
)
from agxir.passes.pass_ import Pass
from agxir.rewrite import Rule

__all__ = [
    "ADDRESS_PIPELINE", "DEFAULT_PIPELINE", "PASSES", "RULE_TABLES", "Pass", "UnknownPass", "get_pass",
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
}

DEFAULT_PIPELINE: tuple[str, ...] = ("copyprop", "cmpsel", "branch-cmp", "dce")
# Seed 001's address pipeline: clean up amul chains, fuse leas, fold them into loads and
# stores, lower what is left (the promoted math must not overflow: see oracles/smt/promotion).
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
