"""The picture of a stats run: per comparison (a row) and metric (a column), every
program's relative change, sorted, so the spread behind a total is visible (how many
programs moved, how far, which way). Helped programs are green, HURT red; a change from 0
(infinite) is drawn at the top of the axis. Matplotlib with the headless `Agg` backend,
one PNG.
"""

from __future__ import annotations

import math

from fuzz.stats.metrics import LOWER_IS_BETTER, METRICS

__all__ = ["plot_changes"]


def plot_changes(path, panels) -> None:
    """`panels`: (comparison name, {metric: [(before, after), ...]}) per row."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from fuzz.stats.report import relative

    rows = max(1, len(panels))
    figure, axes = plt.subplots(rows, len(METRICS), figsize=(3.2 * len(METRICS), 2.2 * rows),
                                squeeze=False)
    for row, (name, per_metric) in enumerate(panels):
        for column, metric in enumerate(METRICS):
            ax = axes[row][column]
            pairs = per_metric.get(metric, [])
            changes = sorted(relative(b, a) for b, a in pairs)
            finite = [c for c in changes if math.isfinite(c)]
            top = max([abs(c) for c in finite] + [0.01])
            shown = [max(-top, min(top, c)) * 100 for c in changes]
            good = (lambda c: c < 0) if LOWER_IS_BETTER[metric] else (lambda c: c > 0)
            colours = ["tab:green" if good(c) else "tab:red" if c != 0 else "tab:gray"
                       for c in shown]
            ax.scatter(range(len(shown)), shown, c=colours, s=2, linewidths=0)
            ax.axhline(0, color="black", linewidth=0.5)
            total_b = sum(b for b, _ in pairs)
            total_a = sum(a for _, a in pairs)
            total = relative(total_b, total_a)
            label = f"{total * 100:+.2f}%" if math.isfinite(total) else "n/a"
            ax.set_title(f"{name}: {metric} {label}", fontsize=8)
            ax.tick_params(labelsize=6)
            if column == 0:
                ax.set_ylabel("change per program (%)", fontsize=7)
            if row == rows - 1:
                ax.set_xlabel("programs, sorted", fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
