"""The bug zoo's list: every variant `agxfuzz zoo` runs, in its order, and the choice of some
by name.

Each family of variants lives in its own module (variants, optimizer_variants,
address_variants, machine_variants, exec_cmp_variants, reuse_variants, schedule_variants);
this module only lists the families a campaign can catch (the hand-written-only ones,
`reuse_variants.HAND_WRITTEN` and `exec_cmp_variants.UNREACHABLE`, are caught by their
tests: see each module's docstring). Mesa's C variants are fuzz.mesa.zoo's.
"""

from __future__ import annotations

from fuzz.zoo.address_variants import VARIANTS as ADDRESS_VARIANTS
from fuzz.zoo.exec_cmp_variants import VARIANTS as EXEC_CMP_VARIANTS
from fuzz.zoo.machine_variants import MACHINE_VARIANTS
from fuzz.zoo.reuse_variants import VARIANTS as REUSE_VARIANTS
from fuzz.zoo.runner import Variant
from fuzz.zoo.schedule_variants import VARIANTS as SCHEDULE_VARIANTS
from fuzz.zoo.variants import VARIANTS as PASS_AND_ANALYSIS_VARIANTS

ZOO: tuple[Variant, ...] = (
    *PASS_AND_ANALYSIS_VARIANTS, *ADDRESS_VARIANTS, *MACHINE_VARIANTS,
    # the register-level passes of issue 9
    *EXEC_CMP_VARIANTS, *REUSE_VARIANTS, *SCHEDULE_VARIANTS,
)


class UnknownVariant(KeyError):
    """A name no variant of the zoo has."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.message = f"unknown variant {name!r}; known: {', '.join(v.name for v in ZOO)}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def select(only: str | None) -> list[Variant]:
    """The whole zoo, or the variants a comma-separated `only` names, in its order."""
    if not only:
        return list(ZOO)
    known = {v.name: v for v in ZOO}
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    for name in wanted:
        if name not in known:
            raise UnknownVariant(name)
    return [known[name] for name in wanted]
