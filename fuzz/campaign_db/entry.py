"""A corpus entry: the choice sequence that rebuilds a program, the features it reached, and
the generator version that gives the choices their meaning.

Entries travel between machines as bytes (`to_bytes`/`from_bytes`, UTF-8 JSON), so every
database stores the same thing. An entry of another generator version is never replayed as
if it were current: `from_bytes` keeps its version, and databases keep each version under
its own key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field


class EntryError(ValueError):
    """Bytes that are not a corpus entry."""


@dataclass(frozen=True)
class CorpusEntry:
    choices: bytes  # the byte stream ChoiceSource.from_bytes replays into the program
    generator_version: int
    features: frozenset[str] = field(default_factory=frozenset)
    origin: str = ""  # where it came from ("seed 42 program 7", "mutant of 3fa2...")

    @property
    def key(self) -> str:
        """Names the program, not its features: the same choices are one entry."""
        return hashlib.sha256(self.choices).hexdigest()[:16]

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "v": self.generator_version,
                "choices": base64.b64encode(self.choices).decode("ascii"),
                "features": sorted(self.features),
                "origin": self.origin,
            },
            sort_keys=True,
        ).encode()

    @staticmethod
    def from_bytes(data: bytes) -> CorpusEntry:
        try:
            record = json.loads(data)
            return CorpusEntry(
                choices=base64.b64decode(record["choices"], validate=True),
                generator_version=int(record["v"]),
                features=frozenset(str(f) for f in record.get("features", [])),
                origin=str(record.get("origin", "")),
            )
        except (ValueError, KeyError, TypeError) as error:
            raise EntryError(f"not a corpus entry: {error}") from None
