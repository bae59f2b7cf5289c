"""What a pass is and promises: its `Contract`.

A contract is the whole of what the rest of the project may know about a pass: its name
and one-line summary, `run(fn) -> bool` (the `Pass` contract of `agxir.passes.pass_`), the
level of function it takes and the level it gives ("ssa", "exec", "vreg", "machine"), its
rule table when its rewrites come from one (`agxir.rewrite.Rule`s, which the audit proves),
what it promises beyond refinement (`PROMISES`, each switching on the step oracle that
holds it to the promise), its place in the pipelines (`prefix`: the steps that bring an SSA
program to it, ending with itself; `after`: the steps its pipeline runs after it), and, for
a wrong variant of a pass (the bug zoo), `of`: the pass it wraps.

Contracts are declared, one line each, in `agxir.passes.registry` (the model's passes) and
`fuzz.mesa.passes` (Mesa's, through the bridge); `placed` computes a pass's place from the
pipelines once, and `variant` derives a variant's contract from the pass it wraps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.rewrite import Rule

# What a pass may promise beyond refinement (every pass promises that), each held by a step
# oracle of fuzz.step_oracles:
# 32-bit address math promoted to 64 bits: z3 proves it cannot overflow (`promotion`).
PROMOTES_ADDRESS_MATH = "promotes-address-math"
# No block's register pressure rises (`pressure`).
LOWERS_PRESSURE = "lowers-pressure"
# Optimizes, schedules and allocates in one step (Mesa's agx_compile.c order): the RA and
# demand checkers cannot align its output with its input, refinement judges it instead.
WHOLE_BACKEND = "whole-backend"
PROMISES = frozenset({PROMOTES_ADDRESS_MATH, LOWERS_PRESSURE, WHOLE_BACKEND})
LEVELS = ("ssa", "exec", "vreg", "machine")


@dataclass(frozen=True)
class Contract:
    name: str
    summary: str
    run: Callable[[Function], bool]
    takes: str  # the level of function `run` accepts
    gives: str  # the level it leaves the function at
    rules: tuple[Rule, ...] | None = None
    promises: frozenset[str] = frozenset()
    prefix: tuple[str, ...] = ()  # SSA program -> this pass, ending with its own name
    after: tuple[str, ...] = ()  # what its pipeline runs after it (copy lowering, ...)
    of: str | None = None  # a variant: the pass it wraps

    def __post_init__(self) -> None:
        if self.takes not in LEVELS or self.gives not in LEVELS:
            raise ValueError(f"{self.name}: levels {self.takes!r} -> {self.gives!r}")
        if not self.promises <= PROMISES:
            raise ValueError(f"{self.name}: unknown promises {sorted(self.promises - PROMISES)}")
        if self.prefix and self.prefix[-1] != self.name:
            raise ValueError(f"{self.name}: its prefix {self.prefix} does not end with it")

    @property
    def as_pass(self) -> Pass:
        return Pass(self.name, self.summary, self.run)


def declare(p: Pass, takes: str, gives: str, rules: tuple[Rule, ...] | None = None,
            promises: frozenset[str] = frozenset()) -> Contract:
    """A registry line: the pass with its levels, rule table and promises (placed later)."""
    return Contract(p.name, p.summary, p.run, takes, gives, rules, promises)


def placed(contract: Contract, pipelines: Sequence[Sequence[str]],
           lead: Sequence[str] = ()) -> Contract:
    """`contract` with its place: in the first of `pipelines` that holds it, the steps up to
    and including it (after `lead`, the steps before any of these pipelines) and the steps
    after it; a pass no pipeline holds takes an SSA program as it is."""
    for pipeline in pipelines:
        if contract.name in pipeline:
            at = list(pipeline).index(contract.name)
            return replace(contract, prefix=(*lead, *pipeline[: at + 1]),
                           after=tuple(pipeline[at + 1:]))
    return replace(contract, prefix=(*lead, contract.name), after=())


def variant(of: Contract, name: str, summary: str, run: Callable[[Function], bool]) -> Contract:
    """A wrong variant of `of`: its levels, promises and place, with its own name and run.
    Not its rule table: that is the right pass's, which the audit proves."""
    return replace(of, name=name, summary=summary, run=run, rules=None, of=of.name,
                   prefix=(*of.prefix[:-1], name))
