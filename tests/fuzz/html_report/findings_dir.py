"""Real findings for the report's tests: known-wrong passes (zoo variants) on small
programs through the harness, written by the FindingStore as a campaign writes them."""

from __future__ import annotations

from pathlib import Path

from agxir.text import parse_function
from fuzz.findings import FindingStore
from fuzz.harness import Harness
from fuzz.passes_under_test import python_pass, replay_arguments
from oracles.inputs import InputSet

# cmpsel-any-condition fuses a select whatever its condition: thread 0 exports 0x0, not 0x3c00.
CMPSEL = """func @cmpsel(u0:64) {
b2:
  %24:16 = convert u0 mode=u2f
  %32:16 = icmp #0, #0 cond=ueq inv=0
  %33:16 = icmpsel %32, #0, %24, #0 cond=ugt
  export %33 slot=0
  stop
}
"""
# dce-removes-stores deletes the store: the buffer keeps its old contents.
STORE = """func @store(u2:16, u4:ptr[4]) {
b1:
  device_store u2, u4, #0 fmt=i8 shift=0
  stop
}
"""
CASES = (
    ("fuzz.zoo.variants:cmpsel_any_condition", CMPSEL,
     InputSet(threads=1, scalars={"u0": 1})),
    ("fuzz.zoo.variants:dce_removes_stores", STORE,
     InputSet(threads=1, scalars={"u2": 0}, buffers={"u4": bytes.fromhex("da000000")})),
)


def write_finding(directory: Path, spec: str, program: str, input_set: InputSet):
    """The finding of the Python pass `spec` on `program` (it must fail), written."""
    unit = python_pass(spec)
    findings = Harness([input_set]).check(parse_function(program), [[unit]])
    assert findings, f"{spec} did not fail on its program"
    store = FindingStore(directory, lambda finding: replay_arguments([unit]))
    return findings[0], store.write(findings[0], seed=1, index=0)


def make_findings(directory: Path) -> list:
    """Two findings in `directory`: [(Finding, FindingFiles), ...]."""
    return [write_finding(directory, *case) for case in CASES]
