"""What a campaign's workers tell its parent, one dataclass per kind of message.

Every message names the worker (`job`) that sent it. A worker sends them over its own pipe,
synchronously, so a pass that kills the worker never leaves half a message behind; the
parent (`fuzz.campaign`) handles them all in one place. In the order a worker sends them
for one program: `Checking` (guided runs only: what to rebuild if the worker dies on it),
`Found` per finding, `Reached`, `Kept`, `Checked`; then, once, `Failed` if the harness
itself broke, and `Done`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzz.campaign_db.entry import CorpusEntry
from fuzz.campaign_db.guided import Case
from fuzz.harness import Finding, Stats


@dataclass(frozen=True)
class Checking:
    """The worker is about to check this program (sent before checking it)."""

    job: int
    case: Case


@dataclass(frozen=True)
class Found:
    """A finding on program `index`."""

    job: int
    index: int
    finding: Finding


@dataclass(frozen=True)
class Reached:
    """Features the worker's programs had not reached before."""

    job: int
    features: frozenset[str]


@dataclass(frozen=True)
class Kept:
    """A program that entered the worker's corpus."""

    job: int
    entry: CorpusEntry


@dataclass(frozen=True)
class Checked:
    """The statistics of one program, sent per program so a worker that dies has had every
    program it finished counted."""

    job: int
    stats: Stats


@dataclass(frozen=True)
class Failed:
    """A bug of the harness, with the program that replays it."""

    job: int
    error: str


@dataclass(frozen=True)
class Done:
    """The worker checked its share (or was told to stop) and exits."""

    job: int


Message = Checking | Found | Reached | Kept | Checked | Failed | Done
