"""Guidance: which program a campaign checks next, and which programs it keeps.

With guidance on, program i of seed S is either fresh, drawn by a recording source from the
seed (`ChoiceSource.recording`, so its choice bytes are known), or, once the worker's corpus
holds entries, with probability `MUTANT_SHARE` a mutant of a corpus entry
(`fuzz.campaign_db.mutate`), rebuilt from its bytes by `ChoiceSource.from_bytes`. Which, and
which mutation, is drawn from a generator seeded by (S, i), so with one job `--seed S`
replays the run. A program that reaches a feature its worker had not seen (or, in the
parent, the campaign had not) enters the corpus as a `CorpusEntry` (bytes, features,
origin). With guidance off, programs are the blind stream (`ChoiceSource.from_seed`, which
tests pin) and features are only counted.

Which entry to mutate: each entry is weighted by how rare the rarest feature it brought is
(1 / the number of programs that reached it so far; an arc's count is scaled by the
coverage sampling interval, since only one program in K is measured), so mutation goes where
few programs have been, as AFL's and libFuzzer's schedules do.

Each worker keeps its own corpus and sends its new entries to the parent, which keeps
those that reached features new to the campaign and to the stored corpus in the campaign
database (`fuzz.campaign_db.db`, keyed by generator version). Workers never exchange entries
during a run, so a worker's programs are a function of the seed and its own programs.

What a run starts from: with `shared_corpus` off (`--guidance on`, the default) only its own
programs, so `--seed S` replays the run whatever the database holds; with it on
(`--guidance shared`) every worker also starts from the database's corpus, which is how
runs and machines build on each other's work, and the run is then a function of the seed
and of the corpus it loaded (the summary says how many entries).
"""

from __future__ import annotations

import base64
import json
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fuzz.campaign_db.db import CampaignDB
from fuzz.campaign_db.entry import CorpusEntry
from fuzz.campaign_db.features import CoverageSampler, feature_kind
from fuzz.campaign_db.mutate import mutate
from fuzz.findings import write_atomically
from fuzz.generate import GENERATOR_VERSION, ChoiceSource
from fuzz.generate.cases import CaseOptions, build_case, build_from, program_seed

__all__ = ["MUTANT_SHARE", "Case", "CampaignCorpus", "GuideOptions", "WorkerGuide",
           "case_program"]

# Half of the programs mutate corpus entries once there are any: the other half keeps
# drawing fresh programs, which is what finds features no mutant is near.
MUTANT_SHARE = 0.5


class GuideOptions(CaseOptions, Protocol):
    """What guidance reads of a campaign's configuration (`fuzz.campaign.CampaignConfig`
    has these; named here so this module need not import the campaign, which imports it)."""

    seed: int
    guidance: bool
    shared_corpus: bool
    coverage_every: int
    db: CampaignDB | None


@dataclass(frozen=True)
class Case:
    """Where program `index` came from: the blind stream (`choices` None), a fresh recorded
    program, or a mutant (`parent`: the key of the entry it mutates; `mutations`)."""

    index: int
    choices: bytes | None
    origin: str
    parent: str | None = None
    mutations: tuple[str, ...] = ()

    def record(self, version: int) -> dict:
        """What a finding's record says about its program, so it replays on its own."""
        data = {"origin": self.origin, "generator_version": version}
        if self.choices is not None:
            data["choices"] = base64.b64encode(self.choices).decode("ascii")
        if self.parent is not None:
            data["mutant_of"] = self.parent
            data["mutations"] = list(self.mutations)
        return data


def fresh(seed: int, index: int, config: GuideOptions):
    """(case, fn, inputs) of the recorded fresh program `index` of `seed`."""
    source = ChoiceSource.recording(program_seed(seed, index))
    fn, inputs = build_from(source, config)
    return Case(index, source.recorded(), f"seed {seed} program {index}"), fn, inputs


def replay(choices: bytes, config: GuideOptions, frames: list | None = None):
    return build_from(ChoiceSource.from_bytes(choices, frames), config)


def case_program(config: GuideOptions, case: Case | None, index: int):
    """The program and inputs of a case (None: blind program `index`)."""
    if case is None or case.choices is None:
        return build_case(config.seed, index, config)
    return replay(case.choices, config)


class WorkerGuide:
    """One worker's corpus, the features it has seen, and its coverage sampler."""

    def __init__(self, config: GuideOptions, entries: list[CorpusEntry] = ()):
        self.config = config
        self.on = config.guidance
        self.version = GENERATOR_VERSION
        self.sampler = CoverageSampler(config.coverage_every)
        self.seen: set[str] = set()  # features of this worker's corpus, loaded entries included
        self.reached: set[str] = set()  # features this worker's programs reached
        self.hits: Counter = Counter()  # programs that reached each feature (guidance on)
        self.corpus: list[tuple[CorpusEntry, list]] = []
        # Per entry: the features it was first to reach, each with its count's scale.
        self.brought: list[tuple[tuple[str, int], ...]] = []
        self._arc_scale = max(1, config.coverage_every)
        for entry in entries:
            new = entry.features - self.seen
            self.seen |= entry.features
            if self.on:
                self.hits.update(entry.features)
                self._keep(entry, new or entry.features)

    def _keep(self, entry: CorpusEntry, brought, frames: list | None = None) -> None:
        if frames is None:
            frames = []
            replay(entry.choices, self.config, frames)
        self.corpus.append((entry, frames))
        scale = self._arc_scale
        self.brought.append(tuple((f, scale if f.startswith("arc:") else 1) for f in brought))

    def _pick(self, rng: random.Random) -> int:
        """An entry, weighted by the rarity of the rarest feature it brought."""
        hits = self.hits
        weights = [1.0 / max(1, min(hits[f] * scale for f, scale in brought))
                   for brought in self.brought]
        return rng.choices(range(len(weights)), weights)[0]

    def next(self, index: int):
        """(case, fn, inputs, frames) of program `index`."""
        config = self.config
        if not self.on:
            fn, inputs = build_case(config.seed, index, config)
            return Case(index, None, "blind"), fn, inputs, None
        rng = random.Random(f"agxfuzz-guide:{config.seed}:{index}")
        if self.corpus and rng.random() < MUTANT_SHARE:
            entry, frames = self.corpus[self._pick(rng)]
            donor = self.corpus[rng.randrange(len(self.corpus))][0].choices
            for _ in range(4):  # a mutant equal to its entry would check it again
                choices, done = mutate(entry.choices, rng, frames=frames, donors=[donor])
                if choices != entry.choices:
                    break
            frames = []
            fn, inputs = replay(choices, config, frames)
            origin = f"mutant of {entry.key} ({'; '.join(done)})"
            return Case(index, choices, origin, entry.key, tuple(done)), fn, inputs, frames
        case, fn, inputs = fresh(config.seed, index, config)
        return case, fn, inputs, None

    def observe(self, case: Case, features: set[str], frames: list | None):
        """(features this worker's programs had not reached, the corpus entry the program
        earns by reaching features new to the worker's corpus, or None)."""
        if self.on:
            self.hits.update(features)
        reached = features - self.reached
        self.reached |= reached
        new = features - self.seen
        if not new:
            return reached, None
        self.seen |= new
        if not self.on:
            return reached, None
        entry = CorpusEntry(case.choices, self.version, frozenset(features), case.origin)
        self._keep(entry, new, frames)
        return reached, entry


class CampaignCorpus:
    """The parent's side: the features any worker reached, and the entries that reached
    features new to the campaign and to the stored corpus, kept in the campaign database
    when there is one."""

    def __init__(self, config: GuideOptions):
        self.db = config.db
        self.on = config.guidance
        self.shared = config.guidance and config.shared_corpus
        self.features: set[str] = set()  # reached by this run's programs
        self.stored: list[CorpusEntry] = []  # the database's entries when the run started
        self.stored_features: set[str] = set()
        self.added = 0  # entries this run found
        self.kept = 0  # of which new to the database
        self.other_versions: dict[int, int] = {}  # stored entries of other generator versions
        if self.db is not None and self.on:
            self.stored = list(self.db.corpus_entries())
            self.other_versions = {
                v: n for v, n in self.db.corpus_versions().items() if v != GENERATOR_VERSION
            }
        for entry in self.stored:
            self.stored_features |= entry.features
        self._known = set(self.stored_features)  # what an entry must add to be kept

    @property
    def loaded(self) -> list[CorpusEntry]:
        """The entries every worker starts from."""
        return self.stored if self.shared else []

    def reached(self, features) -> None:
        self.features |= set(features)

    def offer(self, entry: CorpusEntry) -> bool:
        """Keep `entry` if it reached a feature no entry of the campaign or the database had."""
        if entry.features <= self._known:
            return False
        self._known |= entry.features
        self.added += 1
        if self.db is not None and self.db.corpus_add(entry):
            self.kept += 1
        return True

    @property
    def size(self) -> int:
        """Entries the run's workers drew on (loaded and new)."""
        return len(self.loaded) + self.added

    @property
    def new_features(self) -> int:
        return len(self.features - self.stored_features)

    def by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(feature_kind(f) for f in self.features).items()))


def annotate_record(path, case: Case) -> None:
    """Add where the program came from to a finding's record (its choice bytes replay it;
    for a mutant, which entry and mutations made it)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return
    data["program"] = case.record(GENERATOR_VERSION)
    write_atomically(path, json.dumps(data, indent=1) + "\n")
