"""The report replays a finding of a pass that took its process down (issue 19: it was grey,
"not replayed"): the pipeline runs in a supervised child, and the replay says whether it
still dies the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.text import parse_function
from fuzz.findings import FindingStore
from fuzz.harness import Finding
from fuzz.html_report.records import load_record
from fuzz.html_report.replay import DIFFERENT, PASSES, SAME, replay
from oracles.inputs import random_input_sets

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = (ROOT / "tests" / "golden" / "diverging_branches.agx").read_text()

PASSES_SOURCE = """\
import os
import signal


def exits(fn):
    os._exit(3)


def sigkills(fn):
    os.kill(os.getpid(), signal.SIGKILL)


def fine(fn):
    return False
"""


def _record(tmp_path, attribute: str, message: str):
    module = tmp_path / "deadly.py"
    module.write_text(PASSES_SOURCE)
    name = f"deadly:{attribute}"
    store = FindingStore(tmp_path / "findings",
                         lambda finding: ["--pass", f"{module}:{attribute}"])
    [inputs] = random_input_sets(parse_function(PROGRAM), 4, 1, 1)
    files = store.write(Finding(name, "crash", message, ("dce", name), PROGRAM, inputs),
                        flags=["--passes", "dce", "--pass", f"{module}:{attribute}"])
    return load_record(files.record)


@pytest.mark.parametrize("attribute, message", [
    ("exits", "the pass took its process down (exited with status 3)"),
    ("sigkills", "the pass took its process down (killed by SIGKILL)"),
])
def test_a_death_is_replayed_and_still_fails_the_same_way(tmp_path, attribute, message):
    result = replay(_record(tmp_path, attribute, message), pass_timeout=5)
    assert result.status == SAME, result.note
    assert result.step == f"deadly:{attribute}"
    assert result.after_error == message
    assert result.before is not None and result.before.dot  # the CFG before the pass
    assert result.lanes_note == "the pass took its process down: no function after it to run"


def test_a_death_that_now_dies_otherwise_or_not_at_all_says_so(tmp_path):
    other = replay(_record(tmp_path, "exits", "the pass took its process down (killed by "
                                             "SIGKILL)"), pass_timeout=5)
    assert other.status == DIFFERENT
    assert "exited with status 3" in other.note
    fixed = replay(_record(tmp_path, "fine", "the pass took its process down (killed by "
                                             "SIGKILL)"), pass_timeout=5)
    assert fixed.status == PASSES
