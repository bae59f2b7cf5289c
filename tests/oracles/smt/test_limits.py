"""z3 budgets in tests are resource limits: the same verdict and the same work on any
machine under any load; the wall timeout only a safety net far above them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import z3

from oracles.smt import limits

ROOT = Path(__file__).resolve().parents[3]


def _factoring(solver: z3.Solver) -> None:
    """A query z3 spends a long time on: split a 40-bit product into two factors."""
    a, b = z3.BitVecs("a b", 40)
    solver.add(a * b == (1000000007 * 998244353) % (1 << 40), z3.UGT(a, 1), z3.UGT(b, 1),
               z3.ULT(a, 1 << 20), z3.ULT(b, 1 << 21))


def _units(solver: z3.Solver) -> int:
    return solver.statistics().get_key_value("rlimit count")


def test_the_suite_runs_on_resource_limits():
    assert limits.resource_units_per_ms() == limits.RLIMIT_PER_MS
    assert os.environ[limits.ENVIRONMENT] == str(limits.RLIMIT_PER_MS)  # for commands too


def test_a_budget_is_an_rlimit_and_the_wall_timeout_a_far_safety_net():
    since = limits.mark()
    solver = z3.Solver()
    limits.limit(solver, 20)
    _factoring(solver)
    assert solver.check() == z3.unknown
    # z3 stops at the budget's units, never at the (20 * 20 ms + 60 s) wall timeout.
    assert 20 <= limits.spent_ms(solver, since) < 2 * 20


_WORK = """
import z3
from oracles.smt import limits
from tests.oracles.smt.test_limits import _factoring, _units
before = _units(z3.Solver())
solver = z3.Solver()
limits.limit(solver, 10_000)
_factoring(solver)
solver.add(z3.ULT(z3.BitVec("a", 40), 2000))  # small enough to decide
print(solver.check(), _units(solver) - before)
"""


def test_the_same_query_does_the_same_work_whatever_the_load():
    """z3 counts the same units for a query in a fresh process every time (within one
    process the count also depends on the queries before it: budgets leave room for that)."""
    runs = {subprocess.run([sys.executable, "-c", _WORK], capture_output=True, text=True,
                           cwd=ROOT, check=True).stdout for _ in range(3)}
    assert len(runs) == 1
    verdict, units = runs.pop().split()
    assert verdict == "unsat" and 0 < int(units) < 10_000 * limits.RLIMIT_PER_MS


def test_each_check_gets_its_own_budget():
    solver = z3.Solver()
    _factoring(solver)
    limits.limit(solver, 5)
    assert solver.check() == z3.unknown
    first = _units(solver)
    limits.limit(solver, 5)
    assert solver.check() == z3.unknown
    assert _units(solver) - first >= 5 * limits.RLIMIT_PER_MS  # not stopped at once


def test_without_a_resource_budget_the_budget_is_wall_time(monkeypatch):
    monkeypatch.setattr(limits, "_per_ms", 0)
    solver = z3.Solver()
    limits.limit(solver, 0.2)  # rounds up to 1 ms: never an unlimited 0
    _factoring(solver)
    assert solver.check() == z3.unknown
    assert "timeout" in solver.reason_unknown() or "canceled" in solver.reason_unknown()
    started, units = limits.mark()
    assert limits.spent_ms(solver, (started - 2.0, units)) >= 2000  # wall time, not units


def test_a_bad_setting_is_bad_usage_in_one_line():
    code = "import oracles.smt.limits"
    for value in ("fast", "-1", "1.5"):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                cwd=ROOT, env={**os.environ, limits.ENVIRONMENT: value})
        assert result.returncode == 2
        assert result.stderr.startswith(f"agxfuzz: {limits.ENVIRONMENT}={value!r}: expected 0 "
                                        "or more z3 resource units")
        assert result.stderr.count("\n") == 1
    with pytest.raises(ValueError, match="0 or more"):
        limits.use_resource_limit(-5)
