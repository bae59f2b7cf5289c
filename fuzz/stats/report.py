"""The shader-db style report of one comparison: per metric the totals before and after,
the relative change of the total with a 95% confidence interval, how many programs it
helped and HURT, and the most helped and most HURT programs by name; the table, JSON and
CSV forms of it.

As Mesa's shader-db `report.py`: a program is helped when the metric moved the good way
(down, except threads, up), HURT when it moved the bad way; the relative change is that
of the total over the programs both pipelines compiled (`after/before - 1`), and a
program's own change is relative to its before value (infinite from 0).

The confidence interval is a paired bootstrap over programs (`bootstrap_ci`): programs are
resampled with replacement (a multinomial weight per program, numpy's seeded generator),
keeping each program's before and after together, and the interval is the 2.5th and 97.5th
percentiles of the resampled totals' relative change. It is an interval for the change on
programs drawn the way this corpus was drawn, not a statement about other shaders.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field

import numpy as np

from fuzz.stats.metrics import LOWER_IS_BETTER, METRICS

__all__ = ["MetricSummary", "bootstrap_ci", "summarize", "format_comparison", "write_csv",
           "relative"]  # fmt: skip

RESAMPLES = 2000
TOP = 10  # programs kept per list in JSON; the table shows the first three


def relative(before: float, after: float) -> float:
    """`(after - before) / before`; 0 when both are 0, infinity (signed) from 0."""
    if before == 0:
        return 0.0 if after == 0 else math.copysign(math.inf, after)
    return (after - before) / before


def bootstrap_weights(n: int, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """`resamples` rows of how often each of `n` programs is drawn (each row sums to n)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)


def bootstrap_ci(before: np.ndarray, after: np.ndarray, weights: np.ndarray):
    """95% interval of the total's relative change under the paired bootstrap `weights`;
    None when no resample has a nonzero before total."""
    totals_before = weights @ before.astype(np.float64)
    totals_after = weights @ after.astype(np.float64)
    ok = totals_before > 0
    if not ok.any():
        return None
    changes = totals_after[ok] / totals_before[ok] - 1.0
    low, high = np.percentile(changes, [2.5, 97.5])
    return float(low), float(high)


@dataclass
class MetricSummary:
    metric: str
    before_total: int
    after_total: int
    change: float | None  # relative change of the total; None when before is 0 and after not
    ci: tuple[float, float] | None
    affected: int
    affected_before: int
    affected_after: int
    helped: int
    hurt: int
    most_helped: list = field(default_factory=list)  # (program, before, after, change)
    most_hurt: list = field(default_factory=list)

    def as_json(self) -> dict:
        def rows(entries):
            return [{"program": p, "before": b, "after": a, "change": _finite(c)}
                    for p, b, a, c in entries]

        return {
            "before": self.before_total, "after": self.after_total,
            "change": self.change, "ci95": list(self.ci) if self.ci else None,
            "affected": self.affected, "affected_before": self.affected_before,
            "affected_after": self.affected_after, "helped": self.helped, "hurt": self.hurt,
            "most_helped": rows(self.most_helped), "most_hurt": rows(self.most_hurt),
        }


def _finite(x: float):
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def summarize(names: list[str], before: np.ndarray, after: np.ndarray,
              weights: np.ndarray | None) -> dict[str, MetricSummary]:
    """Per metric (columns in `METRICS` order; rows are the programs `names`)."""
    out = {}
    for column, metric in enumerate(METRICS):
        b, a = before[:, column], after[:, column]
        sign = -1 if LOWER_IS_BETTER[metric] else 1
        gain = sign * (a - b)  # > 0: helped
        moved = np.flatnonzero(a != b)
        entries = []
        for i in moved:
            change = relative(int(b[i]), int(a[i]))
            entries.append((names[i], int(b[i]), int(a[i]), change, int(gain[i])))

        def rank(entry):  # the largest relative move first, then the largest absolute
            return (-abs(entry[3]), -abs(entry[4]), entry[0])

        helped = sorted((e for e in entries if e[4] > 0), key=rank)
        hurt = sorted((e for e in entries if e[4] < 0), key=rank)
        total_b, total_a = int(b.sum()), int(a.sum())
        change = relative(total_b, total_a)
        out[metric] = MetricSummary(
            metric, total_b, total_a, change if math.isfinite(change) else None,
            bootstrap_ci(b, a, weights) if weights is not None and len(b) else None,
            len(moved), int(b[moved].sum()), int(a[moved].sum()), len(helped), len(hurt),
            [e[:4] for e in helped[:TOP]], [e[:4] for e in hurt[:TOP]],
        )
    return out


def _percent(x: float | None) -> str:
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return "inf%" if x > 0 else "-inf%"
    return f"{x * 100:+.2f}%"


def _program(entry) -> str:
    name, b, a, change = entry
    return f"{name} {b} -> {a} ({_percent(change)})"


def format_comparison(comparison, summaries: dict[str, MetricSummary], programs: int,
                      failures: list[tuple[str, str]]) -> str:
    """The table of one comparison, shader-db style, with its most helped/HURT programs."""
    lines = [
        f"== {comparison.name}: {comparison.difference()}",
        f"   why: {comparison.why}",
        f"   before: {comparison.before.key}",
        f"   after:  {comparison.after.key}",
        f"   {programs} programs compiled by both" + (
            f"; {len(failures)} failed in one of them (first: {failures[0][0]}: "
            f"{failures[0][1]})" if failures else ""),
        f"   {'metric':<9}{'before':>9}{'after':>9}{'change':>10}  {'95% CI (bootstrap)':<22}"
        f"{'affected':>9}{'helped':>8}{'HURT':>6}",
    ]
    for metric in METRICS:
        s = summaries[metric]
        ci = f"[{_percent(s.ci[0])}, {_percent(s.ci[1])}]" if s.ci else "n/a"
        lines.append(
            f"   {metric:<9}{s.before_total:>9}{s.after_total:>9}{_percent(s.change):>10}  "
            f"{ci:<22}{s.affected:>9}{s.helped:>8}{s.hurt:>6}")
    for metric in METRICS:
        s = summaries[metric]
        if s.most_helped:
            lines.append(f"   most helped {metric}: "
                         + ", ".join(_program(e) for e in s.most_helped[:3]))
        if s.most_hurt:
            lines.append(f"   most HURT   {metric}: "
                         + ", ".join(_program(e) for e in s.most_hurt[:3]))
    return "\n".join(lines)


def write_csv(path, rows) -> None:
    """One row per comparison, program and metric: the values before and after and the
    program's relative change (`inf` from 0)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["comparison", "program", "metric", "before", "after", "change"])
        for comparison, program, metric, before, after in rows:
            change = relative(before, after)
            out.writerow([comparison, program, metric, before, after,
                          f"{change:.6f}" if math.isfinite(change) else _finite(change)])
