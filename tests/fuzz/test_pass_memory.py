"""--pass-memory limits the pass, not the interpreter's or numpy's start-up (issue 19): the
limit is what a pass may add to its process's address space, applied around the pass call
only; past it is a "memory-limit" finding, never a crash of the pass; below a floor the
flag is refused."""

from __future__ import annotations

import faulthandler
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from agxir.text import parse_function
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest
from fuzz.processes import (
    PassMemoryLimit,
    address_space,
    check_supervised,
    in_child,
    limit_memory,
    pass_memory_limit,
)
from oracles.inputs import random_input_sets

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "golden" / "diverging_branches.agx"


def _allocations(budget_mb: int) -> tuple:
    """In a child: what a pass may allocate under a `budget_mb` budget, and after it."""
    limit_memory(budget_mb)
    results = [address_space() > budget_mb << 20]  # the process alone is over the budget
    with pass_memory_limit():
        results.append(len(bytearray((budget_mb // 2) << 20)))
    try:
        with pass_memory_limit():
            bytearray((budget_mb * 4) << 20)
        results.append("allocated")
    except PassMemoryLimit as error:
        results.append(str(error))
    results.append(resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY)
    results.append(len(bytearray((budget_mb * 4) << 20)))  # outside a pass: not limited
    return tuple(results)


def test_the_limit_is_relative_to_the_process_and_only_around_the_pass():
    budget = 40
    assert in_child(_allocations, budget, seconds=120) == (
        True,
        (budget // 2) << 20,
        f"the pass went past its memory limit of {budget} MB (--pass-memory)",
        True,
        (budget * 4) << 20,
    )


def _unit(name, run):
    return PassUnderTest(name, run, ("--pass", f"x:{name}"))


def _hog(fn):
    bytearray(512 << 20)
    return False


def _segfaults_when_memory_is_tight(fn):
    """C code that cannot allocate dies of SIGSEGV rather than raising MemoryError."""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY and soft - address_space() < (100 << 20):
        _segfaults(fn)
    return False


def _segfaults(fn):
    faulthandler.disable()  # pytest's, inherited: no dump of this child's death
    os.kill(os.getpid(), signal.SIGSEGV)


def _check(unit, memory_mb):
    fn = parse_function(PROGRAM.read_text())
    harness = Harness(random_input_sets(fn, 4, 1, 1))
    return check_supervised(harness, fn, [[unit]], memory_mb=memory_mb)


def test_a_pass_over_its_budget_is_a_memory_limit_finding():
    [finding] = _check(_unit("_hog", _hog), 64)
    assert (finding.pass_name, finding.oracle) == ("_hog", "memory-limit")
    assert finding.message == "the pass went past its memory limit of 64 MB (--pass-memory)"
    assert _check(_unit("_hog", _hog), 1024) == []


def test_a_death_the_limit_caused_is_a_memory_limit_finding_never_a_crash():
    [finding] = _check(_unit("tight", _segfaults_when_memory_is_tight), 64)
    assert finding.oracle == "memory-limit"
    assert finding.message == ("the pass took its process down (killed by SIGSEGV) under its "
                               "memory limit of 64 MB (--pass-memory) and runs with more")
    [finding] = _check(_unit("always", _segfaults), 64)  # dies however much it is given
    assert (finding.oracle, finding.message) == (
        "crash", "the pass took its process down (killed by SIGSEGV)")


def test_a_campaign_at_a_small_limit_is_green_on_the_registered_passes(tmp_path):
    """At 50 MB numpy's start-up was over the limit (an internal error), and at 200 MB
    correct passes died of SIGSEGV: neither is the pass's doing."""
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "run", "--examples", "6", "--seed", "1", "--jobs", "2",
         "--pass-memory", "50", "--guidance", "off", "--coverage-every", "0",
         "--out", str(tmp_path / "f")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "programs checked: 6" in result.stdout
    assert "findings: 0" in result.stdout


def test_a_memory_limit_finding_replays_under_the_limit_it_was_found_under(tmp_path, capsys):
    """At the default 4096 MB the hog would pass: the record's command, its RUN line and
    `repro` use the finding's own limit."""
    from fuzz.cli import main

    module = tmp_path / "hog.py"
    module.write_text("def hog(fn):\n    bytearray(512 << 20)\n    return False\n")
    assert main(["check", str(PROGRAM), "--pass", f"{module}:hog", "--seed", "1",
                 "--pass-memory", "64", "--out", str(tmp_path / "f")]) == 1
    [record] = [p for p in (tmp_path / "f").glob("*.json") if ".inputs." not in p.name]
    import json

    data = json.loads(record.read_text())
    assert data["oracle"] == "memory-limit" and "--pass-memory 64" in data["command"]
    assert "--pass-memory 64" in record.with_suffix(".agx").read_text().split("; RUN: ")[-1]
    capsys.readouterr()
    assert main(["repro", str(record)]) == 1
    assert "still fails: hog:hog: memory-limit" in capsys.readouterr().out
