"""A campaign's programs by number: the seed of program i of seed S, and the program and
input sets built from it.

Program i of a run with seed S is drawn from a seed derived from (S, i), so `--seed S`
replays a run and any one program can be rebuilt on its own (by a worker that replaces a
dead one, by the reducer, by a test or a benchmark).
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from fuzz.generate.choices import ChoiceSource
from fuzz.generate.features import Features
from fuzz.generate.inputs import generate_inputs
from fuzz.generate.program import generate_program
from fuzz.mesa.translatable import translatable_case


class CaseOptions(Protocol):
    """What shapes a campaign's programs (`fuzz.campaign.CampaignConfig` has these)."""

    size: int
    threads: int
    sets: int
    address_heavy: bool
    mesa_translatable: bool  # programs Mesa's backend can take (fuzz/mesa/)


def program_seed(seed: int, index: int) -> int:
    digest = hashlib.sha256(f"agxfuzz:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def build_from(source: ChoiceSource, options: CaseOptions):
    """The program and input sets `options` asks for, drawn from `source` (the model's
    generator, whatever `mesa_translatable` says)."""
    features = Features.from_source(source, address_heavy=options.address_heavy)
    fn = generate_program(source, features, size=options.size)
    return fn, generate_inputs(fn, source, threads=options.threads, sets=options.sets)


def build_case(seed: int, index: int, options: CaseOptions):
    """(fn, input sets) of blind program `index` of `seed`."""
    source = ChoiceSource.from_seed(program_seed(seed, index))
    if options.mesa_translatable:
        return translatable_case(source, options)
    return build_from(source, options)
