"""One finding: which pass, which oracle, what it said, on what program and input set, and
the signature that tells one bug from another. `fuzz.findings` stores and writes many.

A module of its own so that the harness, which makes findings, and the supervised child
(`fuzz.processes`), which makes the findings of a pass that took its process down, both
import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzz.step_oracles import normalized
from oracles.inputs import InputSet


@dataclass
class Finding:
    pass_name: str
    oracle: str
    message: str
    pipeline: tuple[str, ...]  # the passes run, ending with the one that failed
    program: str  # the text given to the pipeline
    input_set: InputSet | None = None
    # What the signature says of the message, when the oracle built it from its errors'
    # kind and fields (fuzz.step_oracles.Verdict); None: the message, blanked (`normalized`).
    signature_key: str | None = None

    @property
    def signature(self) -> str:
        key = normalized(self.message) if self.signature_key is None else self.signature_key
        return f"{self.pass_name}|{self.oracle}|{key}"
