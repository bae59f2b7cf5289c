"""How long a z3 query may run: wall-clock time, or a deterministic resource budget.

Every query of this package is given a budget in milliseconds (`--timeout MS`, `timeout_ms=`)
and sets it with `limit(solver, ms)` before each `check()`. By default that is z3's wall-clock
`timeout`: fine for a user, but the verdict ("verified" or "timeout") then depends on how
loaded the machine is.

With a resource budget (`AGXFUZZ_Z3_RLIMIT_PER_MS=K` in the environment, or
`use_resource_limit(K)`), the same budget becomes z3's `rlimit` of K units per millisecond,
counted by z3 itself per `check()` and the same on every machine and under any load, so the
verdict depends on the query alone. `RLIMIT_PER_MS` is what a core spends in about a
millisecond on this project's queries (z3 5.4, measured over the SMT tests: 3,000-9,000 units
per CPU millisecond on queries over 20 ms, median 6,700). The wall timeout stays as a safety
net, far above what the rlimit allows (`SAFETY_FACTOR` times the budget plus `SAFETY_MS`:
the slowest-counting query measured would need a load of over 10 per core to reach it). The
test suite runs this way (`tests/conftest.py`).
"""

from __future__ import annotations

import os
import sys
import time

import z3

ENVIRONMENT = "AGXFUZZ_Z3_RLIMIT_PER_MS"
RLIMIT_PER_MS = 5000  # z3 resource units a core spends in about a millisecond (see above)
SAFETY_FACTOR = 20
SAFETY_MS = 60_000


def _from_environment() -> int:
    """The setting from the environment; a bad one is bad usage (exit 2, one line)."""
    text = os.environ.get(ENVIRONMENT, "").strip()
    if not text:
        return 0
    if not text.isdigit():
        print(f"agxfuzz: {ENVIRONMENT}={text!r}: expected 0 or more z3 resource units per "
              "millisecond (0: wall-clock timeouts)", file=sys.stderr)
        raise SystemExit(2)
    return int(text)


_per_ms = _from_environment()


def use_resource_limit(per_ms: int) -> None:
    """Budgets from now on are z3 rlimits of `per_ms` units per millisecond (0: wall-clock
    timeouts again). Processes forked afterwards inherit the setting; for ones started
    afresh, set `AGXFUZZ_Z3_RLIMIT_PER_MS`."""
    global _per_ms
    if per_ms < 0:
        raise ValueError(f"resource units per millisecond: expected 0 or more, got {per_ms}")
    _per_ms = per_ms


def resource_units_per_ms() -> int:
    """The current setting: 0 for wall-clock timeouts."""
    return _per_ms


def limit(solver: z3.Solver, budget_ms: float) -> None:
    """Give `solver`'s next `check()` a budget of `budget_ms` (at least 1 ms)."""
    budget = max(1, int(budget_ms))
    if _per_ms:
        solver.set("rlimit", budget * _per_ms)
        solver.set("timeout", SAFETY_FACTOR * budget + SAFETY_MS)
    else:
        solver.set("timeout", budget)


def _units(solver: z3.Solver | None = None) -> int:
    """z3's resource count so far: one counter for all the solvers of a context."""
    statistics = (solver or z3.Solver()).statistics()
    return int(statistics.get_key_value("rlimit count")) if "rlimit count" in statistics.keys() else 0


def mark() -> tuple[float, int]:
    """Where a budget starts, for `spent_ms`: the time and z3's resource count now."""
    return time.monotonic(), _units()


def spent_ms(solver: z3.Solver, since: tuple[float, int]) -> int:
    """How much of a budget the queries since `since` (a `mark()`) have used: their resource
    units in a resource budget (what z3 counted, the same under any load), else wall time."""
    started, units = since
    if _per_ms:
        return (_units(solver) - units) // _per_ms
    return int((time.monotonic() - started) * 1000)
