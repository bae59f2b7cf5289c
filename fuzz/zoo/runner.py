"""Running the zoo: a time-boxed (or program-boxed) campaign against each wrong variant until
it is caught.

Each variant replaces one pass (or the liveness analysis) with its wrong version; the
campaign stops at the first finding, reduces it, and the table records how long detection
took, after how many programs, which oracle caught it, and how small the reproducer got.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

from agxir.passes.contract import Contract, variant
from agxir.passes.registry import CONTRACTS
from agxir.text import parse_function
from fuzz.campaign import CampaignConfig, run_campaign
from fuzz.findings import FindingStore
from fuzz.passes_under_test import PassUnderTest, registered, replay_arguments


@dataclass(frozen=True)
class Variant:
    """A wrong pass or analysis: a small, documented change with where it comes from.

    A wrong pass is declared `of=` the registered pass it wraps and inherits its contract
    (`contract`: its levels, promises and place in the pipelines); the registered passes run
    before and after it are that place's, unless the declaration gives its own."""

    name: str
    origin: str  # the seed, commit or blog post the bug is drawn from
    description: str
    make_pass: Callable[[], PassUnderTest] | None = None
    liveness: type | None = None  # a wrong liveness analysis in place of agxir.liveness
    address_heavy: bool = False  # programs rich in address math (for address passes)
    # Registered passes run before and after the wrong one: a machine-level variant needs
    # the lowering before it (and, for an allocator, the copy lowering after it). None: those
    # of its `of` pass's place (none for a variant of no pass).
    before: tuple[str, ...] | None = None
    after: tuple[str, ...] | None = None
    # A wrong variant in Mesa's C (fuzz.mesa.zoo.MesaBuild): its own bridge build, the
    # pipelines its campaign runs (Mesa-translatable programs) and the check of a catch.
    mesa: object = None
    of: str | None = None  # the registered pass this one is a wrong variant of

    def __post_init__(self) -> None:
        place = CONTRACTS[self.of] if self.of is not None else None
        if self.before is None:
            object.__setattr__(self, "before", place.prefix[:-1] if place else ())
        if self.after is None:
            object.__setattr__(self, "after", place.after if place else ())

    @property
    def contract(self) -> Contract | None:
        """Its pass's contract: the `of` pass's, with this pass's name, description and run
        (None for a variant of no registered pass: an analysis, a rule set, Mesa's C)."""
        if self.make_pass is None:
            return None
        return self._contract_of(self.make_pass())

    def _contract_of(self, unit: PassUnderTest) -> Contract | None:
        if self.of is None:
            return None
        return variant(CONTRACTS[self.of], unit.name, self.description, unit.run)

    def pipeline(self) -> list[PassUnderTest]:
        """The registered passes before it, the wrong pass (carrying its contract, so the
        step oracles hold it to its `of` pass's promises), the registered ones after."""
        middle = []
        if self.make_pass:
            unit = self.make_pass()
            middle = [replace(unit, contract=self._contract_of(unit) or unit.contract)]
        return (
            [registered(name) for name in self.before]
            + middle
            + [registered(name) for name in self.after]
        )


@dataclass
class ZooOutcome:
    variant: Variant
    caught: bool
    seconds: float | None
    programs: int | None
    oracle: str | None
    reduced_instructions: int | None
    message: str | None
    reproducer: str | None
    finding: object = None
    files: object = None


def run_variant(variant: Variant, *, seconds: float | None = None, seed: int, jobs: int,
                out: Path, beside: list | None = None, guidance: bool = False,
                coverage_every: int = 0, programs: int | None = None) -> ZooOutcome:
    """The campaign's budget: `seconds`, or `programs` (a fixed number of programs, the same
    outcome on any machine under any load with one job). `beside`: more pipelines every
    program also runs (right passes: they add the default campaign's cost per program, and
    no finding of their own). `guidance`, `coverage_every`: as `CampaignConfig`'s (off by
    default: the blind stream the zoo's tables were timed on)."""
    if (seconds is None) == (programs is None):
        raise ValueError("run_variant: give either seconds or programs")

    mesa = variant.mesa
    pipelines = [*(mesa.pipelines() if mesa else [variant.pipeline()]), *(beside or [])]
    config = CampaignConfig(
        seed=seed,
        pipelines=pipelines,
        seconds=seconds,
        examples=programs,
        jobs=jobs,
        fail_fast=True,
        liveness_analysis=variant.liveness,
        address_heavy=variant.address_heavy,
        guidance=guidance,
        coverage_every=coverage_every,
        mesa_translatable=mesa is not None,
    )
    # by name, the first pipeline's unit first (a Mesa variant's finding may be any one's)
    replay_flags = _replay_flags([unit for pipeline in reversed(pipelines) for unit in pipeline])
    store = FindingStore(out / variant.name, replay_flags)
    with mesa.bridge() if mesa else nullcontext():  # the variant's bridge, for its workers
        result = run_campaign(config, store)
    if result.interrupted:  # Ctrl-C (or SIGTERM) stops the zoo, not just this variant's run
        raise KeyboardInterrupt
    if not result.findings:
        return ZooOutcome(variant, False, None, None, None, None, None, None)
    finding, files = result.findings[0]
    wrong = pipelines[0][len(variant.before)].name if variant.make_pass else None
    if beside and wrong is not None and wrong not in finding.pipeline:
        # A right pass failed first: a real bug, not this variant's catch.
        return ZooOutcome(variant, False, None, None, finding.oracle, None,
                          f"a right pipeline failed first: {finding.pass_name}: {finding.message}",
                          str(files.reproducer) if files else None, finding, files)
    size = parse_function(finding.program).instruction_count()
    outcome = ZooOutcome(
        variant,
        True,
        result.first_finding_seconds,
        result.first_finding_program,
        finding.oracle,
        size,
        finding.message,
        str(files.reproducer) if files else None,
        finding,
        files,
    )
    return mesa.confirm(outcome) if mesa else outcome


def _replay_flags(pipeline):
    """The flags of the finding's own pipeline: the reducer may have dropped steps of the
    variant's (a bug that shows before the copy lowering no longer needs it)."""
    by_name = {unit.name: unit for unit in pipeline}
    return lambda finding: replay_arguments(
        [by_name[name] for name in finding.pipeline if name in by_name] or pipeline)


def summary(outcomes: list[ZooOutcome]) -> dict:
    caught = [o for o in outcomes if o.caught]
    seconds = [o.seconds for o in caught]
    sizes = [o.reduced_instructions for o in caught]
    return {
        "variants": len(outcomes),
        "caught": len(caught),
        "seconds_median": statistics.median(seconds) if seconds else None,
        "seconds_max": max(seconds) if seconds else None,
        "reduced_median": statistics.median(sizes) if sizes else None,
        "reduced_max": max(sizes) if sizes else None,
    }
