"""Optimisation passes over the IR, modelled on Mesa's AGX optimizer, and their registry.

`PASSES` is the SSA-level view of the one registry of passes, `agxir.passes.registry`
(every pass listed explicitly, each with its `Contract`; nothing registers itself on import).
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

import importlib
import sys
from typing import TYPE_CHECKING

from agxir.ir import Function
from agxir.passes.pass_ import Pass

if TYPE_CHECKING:
    from agxir.passes.registry import (
        ADDRESS_PIPELINE,
        CONTRACTS,
        DEFAULT_PIPELINE,
        MESA_OPTIMIZER_PIPELINE,
        PASSES,
        RULE_TABLES,
    )

__all__ = [
    "ADDRESS_PIPELINE", "CONTRACTS", "DEFAULT_PIPELINE", "MESA_OPTIMIZER_PIPELINE", "PASSES", "RULE_TABLES", "Pass", "UnknownPass",
    "get_pass", "run_pipeline",
]  # fmt: skip
_FROM_REGISTRY = frozenset(__all__) - {"Pass", "UnknownPass", "get_pass", "run_pipeline"}


def __getattr__(name: str):
    """The registry's names, and the pass modules, on first use. The registry imports the
    machine passes, which import `agxir.passes.pass_` and so run this package first: were
    the registry imported here at the top, importing a machine pass before anything else
    would reach the registry while that pass's module is still half made."""
    registry = importlib.import_module("agxir.passes.registry")  # binds the pass modules too

    if name in _FROM_REGISTRY:
        value = getattr(registry, name)
        globals()[name] = value
        return value
    if name in globals():
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _here():
    """This module, so that its registry names resolve through `__getattr__` (and a test's
    `monkeypatch.setattr` of one is seen)."""
    return sys.modules[__name__]


class UnknownPass(KeyError):
    """A pass name that is not in `PASSES`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.message = f"unknown pass {name!r}; known passes: {', '.join(_here().PASSES)}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would print the message quoted, as a repr
        return self.message


def get_pass(name: str) -> Pass:
    try:
        return _here().PASSES[name]
    except KeyError:
        raise UnknownPass(name) from None


def run_pipeline(fn: Function, names) -> list[tuple[str, bool]]:
    """Run the named passes in order on `fn` (in place); each name with whether it changed
    `fn`. Every name is looked up first, so an unknown one leaves `fn` untouched."""
    if isinstance(names, str):
        raise TypeError("run_pipeline takes a sequence of pass names, not one string")
    passes = [get_pass(name) for name in names]
    return [(p.name, p.run(fn)) for p in passes]
