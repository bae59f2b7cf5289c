"""The comparisons `agxfuzz stats` runs, as data: each a name, a `why`, and two pipelines
that differ in exactly one pass (a pass added, or one pass swapped for another heuristic).

A `Pipeline` is a tuple of passes from the SSA program to allocated registers: the SSA
optimizer (`agxir.passes.DEFAULT_PIPELINE`, with its cmpsel step being the heuristic under
comparison), then a machine route: Mesa's (`agxir.machine.pipeline.MACHINE_PIPELINE`,
SSA-based RA) or the vreg route (`VREG_PIPELINE`, out of SSA then a colouring allocator),
with a vreg-level pass inserted before `vreg-ra` and a post-RA pass appended at the end.

The rows (seed 000's cmpsel heuristics; the `before` pipeline is the baseline, the `after`
the change, so "helped" means the change helped):
* `cmpsel`: no cmpsel fusion vs Mesa's (heuristic 4), for scale.
* `h4-vs-h1`, `h4-vs-h3`, `h3-vs-h1`: the blog's heuristics against each other:
  heuristic 1 (`cmpsel-uniform-compare`, fuse when both compare sources are uniform),
  heuristic 3 (`cmpsel-uniform-select`, when both payloads are), heuristic 4 (`cmpsel`,
  always). The blog's conclusion: 4 wins on instructions at a small pressure cost.
* `schedule-h4`, `schedule-h1`, `schedule-h3`: each heuristic without and with the pressure
  scheduler (`pressure-schedule`, Mesa's `agx_pressure_schedule`, run on SSA right before
  the machine route, as Mesa runs it before RA).
* `h4-vs-h1-scheduled`, `h4-vs-h3-scheduled`: the heuristics again, both sides scheduled:
  how much of heuristic 4's pressure cost the scheduler takes back.
* `reuse-conversion`: seed 002's conversion register reuse off and on, on the vreg route
  (it is a vreg-level pass, run right before `vreg-ra`): the thread's claim was fewer
  registers (spills), the reviewers' that it can only constrain the allocator.
* `fuse-exec-cmp`: seed 003's compare fused into the exec-mask branch after RA (the v_cmpx
  analog) off and on, appended to Mesa's route. The SSA optimizer's `branch-cmp` (Mesa's
  if_cmp fusion) has already fused every compare the post-RA pass could (a dead compare
  result in the branch's block), so `fuse-exec-cmp-alone` measures it with no
  `branch-cmp` on either side: what the post-RA fusion does on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agxir.machine import fuse_exec_cmp, reuse_conversion
from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINE, VREG_PIPELINE
from agxir.passes import PASSES, pressure_schedule
from agxir.passes.pass_ import Pass

__all__ = ["COMPARISONS", "Comparison", "Pipeline", "UnknownComparison", "pipeline",
           "select"]  # fmt: skip

HEURISTICS = {"cmpsel": "heuristic 4", "cmpsel-uniform-compare": "heuristic 1",
              "cmpsel-uniform-select": "heuristic 3"}  # fmt: skip


@dataclass(frozen=True)
class Pipeline:
    """Passes in order, from an SSA program through register allocation."""

    passes: tuple[Pass, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.passes)

    @property
    def key(self) -> str:
        return ",".join(self.names)


def pipeline(cmpsel: str | None = "cmpsel", *, route: str = "machine",
             ssa_extra: Iterable[Pass] = (), vreg_extra: Iterable[Pass] = (),
             post: Iterable[Pass] = (), branch_cmp: bool = True) -> Pipeline:
    """The SSA optimizer (copyprop, `cmpsel` or no cmpsel step, branch-cmp unless told
    not to, dce, then `ssa_extra`), then the machine route with `vreg_extra` before
    `vreg-ra` (vreg route only) and `post` after it."""
    ssa = ["copyprop", *([cmpsel] if cmpsel else []), *(["branch-cmp"] if branch_cmp else []),
           "dce"]
    steps = [PASSES[name] for name in ssa] + list(ssa_extra)
    if route == "machine":
        if tuple(vreg_extra):
            raise ValueError("vreg-level passes need the vreg route")
        steps += [MACHINE_PASSES[name] for name in MACHINE_PIPELINE]
    elif route == "vreg":
        for name in VREG_PIPELINE:
            if name == "vreg-ra":
                steps += list(vreg_extra)
            steps.append(MACHINE_PASSES[name])
    else:
        raise ValueError(f"unknown route {route!r}")
    return Pipeline(tuple(steps + list(post)))


@dataclass(frozen=True)
class Comparison:
    name: str
    why: str
    before: Pipeline
    after: Pipeline

    def difference(self) -> str:
        """The one pass that differs, as `-removed +added` (or one of them)."""
        old, new = list(self.before.names), list(self.after.names)
        removed = [n for n in old if n not in new]
        added = [n for n in new if n not in old]
        return " ".join([*(f"-{n}" for n in removed), *(f"+{n}" for n in added)])


SCHEDULE = pressure_schedule.PASS


def _h(pass_name: str) -> str:
    return "h" + HEURISTICS[pass_name][-1]


def _heuristic_pair(after: str, before: str, why: str, *, scheduled: bool = False
                    ) -> Comparison:
    name = f"{_h(after)}-vs-{_h(before)}" + ("-scheduled" if scheduled else "")
    extra = (SCHEDULE,) if scheduled else ()
    return Comparison(name, why, pipeline(before, ssa_extra=extra),
                      pipeline(after, ssa_extra=extra))


def _scheduled(heuristic: str) -> Comparison:
    return Comparison(
        f"schedule-{_h(heuristic)}",
        f"the pressure scheduler after {heuristic} ({HEURISTICS[heuristic]}): does "
        "reordering before RA lower the pressure and registers, and at what cost in copies?",
        pipeline(heuristic), pipeline(heuristic, ssa_extra=(SCHEDULE,)),
    )


COMPARISONS: tuple[Comparison, ...] = (
    Comparison(
        "cmpsel",
        "no cmpsel fusion vs Mesa's (heuristic 4, fuse always): the scale the heuristics "
        "are measured against",
        pipeline(None), pipeline("cmpsel"),
    ),
    _heuristic_pair(
        "cmpsel", "cmpsel-uniform-compare",
        "seed 000: heuristic 4 (fuse always, what Mesa merged) vs heuristic 1 (only when both "
        "compare sources are uniform): does fusing every select save instructions, and what "
        "does keeping a and b alive to the select cost in pressure?",
    ),
    _heuristic_pair(
        "cmpsel", "cmpsel-uniform-select",
        "seed 000: heuristic 4 vs heuristic 3 (only when both payloads are uniform, a "
        "backward pass): the instructions heuristic 3 leaves unfused against its pressure",
    ),
    _heuristic_pair(
        "cmpsel-uniform-select", "cmpsel-uniform-compare",
        "seed 000: the two pressure-safe heuristics against each other (3 vs 1)",
    ),
    *(_scheduled(h) for h in HEURISTICS),
    _heuristic_pair(
        "cmpsel", "cmpsel-uniform-compare",
        "heuristic 4 vs 1 with the pressure scheduler on both sides: what is left of "
        "heuristic 4's pressure cost once the scheduler has run",
        scheduled=True,
    ),
    _heuristic_pair(
        "cmpsel", "cmpsel-uniform-select",
        "heuristic 4 vs 3 with the pressure scheduler on both sides",
        scheduled=True,
    ),
    Comparison(
        "reuse-conversion",
        "seed 002: a 32-to-16-bit conversion whose source dies reuses the source's register "
        "(vreg route): fewer registers, as the patch claimed, or only a constrained "
        "allocator, as its reviewers said?",
        pipeline("cmpsel", route="vreg"),
        pipeline("cmpsel", route="vreg", vreg_extra=(reuse_conversion.PASS,)),
    ),
    Comparison(
        "fuse-exec-cmp",
        "seed 003: the compare feeding an exec-mask branch folded into the branch after RA "
        "(the v_cmpx analog): how many instructions it saves",
        pipeline("cmpsel"), pipeline("cmpsel", post=(fuse_exec_cmp.PASS,)),
    ),
    Comparison(
        "fuse-exec-cmp-alone",
        "seed 003's post-RA fusion with no SSA branch-cmp on either side: what it does on "
        "its own (after branch-cmp it finds nothing left)",
        pipeline("cmpsel", branch_cmp=False),
        pipeline("cmpsel", branch_cmp=False, post=(fuse_exec_cmp.PASS,)),
    ),
)


class UnknownComparison(KeyError):
    def __init__(self, name: str) -> None:
        self.message = (f"unknown comparison {name!r}; known: "
                        f"{', '.join(c.name for c in COMPARISONS)}")
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def select(names: str | None) -> tuple[Comparison, ...]:
    """The comparisons named in a comma-separated list (all of them for None), in the
    list's order; `UnknownComparison` for a name that is not a row."""
    if names is None:
        return COMPARISONS
    by_name = {c.name: c for c in COMPARISONS}
    chosen = []
    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue
        if name not in by_name:
            raise UnknownComparison(name)
        if by_name[name] not in chosen:
            chosen.append(by_name[name])
    if not chosen:
        raise UnknownComparison(names)
    return tuple(chosen)
