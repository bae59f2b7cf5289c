"""The verifier's front door: `verify` and `check`, dispatched by the function's level.

`verify` returns every problem with a function, empty when it is valid; `check` raises them
all at once (`VerificationFailed`). Which rules hold is the level's: `agxir.levels` finds
the level's verifier (the SSA verifier in `agxir.ssa_verifier`, the exec, vreg and machine
one in `agxir.machine.verifier`). The error types and the shared limits are re-exported
here, where their users have always found them.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.levels import hooks
from agxir.ssa_verifier import (
    IMMEDIATE_LIMITS,
    MODIFIERS,
    VerificationFailed,
    Verifier,
    VerifyError,
)

__all__ = [
    "IMMEDIATE_LIMITS", "MODIFIERS", "VerifyError", "VerificationFailed", "Verifier", "check",
    "verify",
]  # fmt: skip


def verify(fn: Function) -> list[VerifyError]:
    """Every problem with `fn`, in the order its level's verifier finds them; empty when the
    function is valid."""
    return hooks(fn.level).verify(fn)


def check(fn: Function) -> None:
    errors = verify(fn)
    if errors:
        raise VerificationFailed(errors)
