"""The shader-db style summary on synthetic numbers: totals, helped/HURT (threads the other
way round), the most helped and HURT programs, and the bootstrap interval."""

import math

import numpy as np

from fuzz.stats.metrics import METRICS
from fuzz.stats.report import bootstrap_ci, bootstrap_weights, relative, summarize

INSTRS, HALFREGS, THREADS, COPIES, PRESSURE = range(5)


def _table(rows):
    return np.array(rows, dtype=np.int64)


def test_helped_hurt_totals_and_the_most_moved_programs():
    names = ["p0", "p1", "p2", "p3"]
    before = _table([[10, 8, 1024, 0, 8], [20, 8, 1024, 2, 8], [30, 8, 1024, 0, 8],
                     [40, 112, 896, 1, 100]])
    after = _table([[9, 8, 1024, 1, 8], [20, 8, 1024, 0, 8], [33, 8, 1024, 0, 7],
                    [36, 104, 1024, 1, 100]])
    s = summarize(names, before, after, bootstrap_weights(4, seed=1))
    assert (s["instrs"].before_total, s["instrs"].after_total) == (100, 98)
    assert math.isclose(s["instrs"].change, -0.02)
    assert (s["instrs"].helped, s["instrs"].hurt, s["instrs"].affected) == (2, 1, 3)
    assert (s["instrs"].affected_before, s["instrs"].affected_after) == (80, 78)
    # Most helped by relative change: p0 -10%, then p3 -10% too but larger in absolute
    # terms (4 instructions), so p3 first.
    assert [e[0] for e in s["instrs"].most_helped] == ["p3", "p0"]
    assert s["instrs"].most_hurt == [("p2", 30, 33, 0.1)]
    # More threads is better: p3 went from 896 to 1024, helped.
    assert (s["threads"].helped, s["threads"].hurt) == (1, 0)
    assert (s["halfregs"].helped, s["halfregs"].hurt) == (1, 0)
    # copies from 0: an infinite change, listed first among the HURT; the total 3 -> 2.
    assert s["copies"].most_hurt[0][0] == "p0" and math.isinf(s["copies"].most_hurt[0][3])
    assert s["copies"].most_helped == [("p1", 2, 0, -1.0)]
    assert math.isclose(s["copies"].change, -1 / 3)
    assert (s["pressure"].helped, s["pressure"].hurt) == (1, 0)


def test_relative_change_from_zero():
    assert relative(0, 0) == 0.0
    assert relative(0, 3) == math.inf
    assert relative(4, 3) == -0.25


def test_a_uniform_change_has_a_zero_width_interval_at_the_change():
    before = np.arange(10, 110) * 10
    after = before * 9 // 10  # exactly -10% per program
    low, high = bootstrap_ci(before, after, bootstrap_weights(100, seed=3))
    assert math.isclose(low, -0.1) and math.isclose(high, -0.1)


def test_the_interval_covers_the_change_and_narrows_with_more_programs():
    rng = np.random.default_rng(5)

    def interval(n):
        before = rng.integers(20, 60, size=n)
        noise = rng.integers(-3, 3, size=n)  # mean -0.5: about -1.25% of the total
        after = before + noise
        low, high = bootstrap_ci(before, after, bootstrap_weights(n, seed=9))
        change = after.sum() / before.sum() - 1
        assert low <= change <= high
        return high - low

    assert interval(2000) < interval(50) / 3


def test_the_interval_is_a_function_of_the_seed():
    before, after = np.arange(1, 41), np.arange(1, 41) + (np.arange(40) % 3 == 0)
    first = bootstrap_ci(before, after, bootstrap_weights(40, seed=2))
    assert first == bootstrap_ci(before, after, bootstrap_weights(40, seed=2))
    assert first != bootstrap_ci(before, after, bootstrap_weights(40, seed=4))
    assert first[0] > 0  # every program moved up or stayed: the interval is above zero


def test_no_programs_moved():
    table = _table([[5, 8, 1024, 0, 6]] * 3)
    s = summarize(["a", "b", "c"], table, table.copy(), bootstrap_weights(3, seed=0))
    for metric in METRICS:
        assert (s[metric].helped, s[metric].hurt, s[metric].affected) == (0, 0, 0)
    assert s["copies"].change == 0.0 and s["copies"].ci is None  # totals of 0
    assert s["instrs"].ci == (0.0, 0.0)
