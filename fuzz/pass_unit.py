"""What a pass under test is (`PassUnderTest`) and how running one can go wrong.

A module of its own, importing no pass: the harness, the supervised child
(`fuzz.processes`) and the Mesa bridge's passes (`fuzz.mesa.passes`) all need these, and
`fuzz.passes_under_test`, which finds passes by name, imports the bridge; kept here, none
of them has to import another to name a pass or its failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agxir.ir import Function
from agxir.passes.contract import Contract


class PassLoadError(Exception):
    """A --pass or --pass-cmd that cannot be used: a one-line message for the user."""


class PassFailed(Exception):
    """A pass under test misbehaved (an external command failed or printed bad IR)."""


class PassTimedOut(Exception):
    """A pass ran past its deadline (`fuzz.harness.deadline`, or the bridge's own)."""


@dataclass(frozen=True)
class PassUnderTest:
    name: str
    run: Callable[[Function], bool]
    flag: tuple[str, str]  # how a command line names it: ("--passes", "dce"), ...
    # What it declares (agxir.passes.contract): a registered pass's, a Mesa pass's, a zoo
    # variant's (its `of=` pass's); None for a user's --pass or --pass-cmd, which declare
    # nothing. The step oracles read its promises from here, never from its name.
    contract: Contract | None = None
