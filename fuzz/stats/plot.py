"""The picture of a stats run: one panel per comparison, and in it one curve per metric:
the relative change of that metric in every program it moved, sorted, so the spread behind
a total is visible (how many programs moved, how far, which way; for threads up is better,
for the others down; the programs it did not move are left out, or the curves would be a
flat line at 0). A change from 0 (infinite) is drawn at the edge of the axis. Matplotlib with
the headless `Agg` backend, one PNG.
"""

from __future__ import annotations

import math

from fuzz.stats.metrics import LOWER_IS_BETTER, METRICS
from fuzz.stats.report import relative

__all__ = ["plot_changes"]

LIMIT = 1.0  # changes are drawn within +-100%


def plot_changes(path, panels) -> None:
    """`panels`: (comparison name, {metric: [(before, after), ...]}) per panel."""
    import matplotlib  # loaded late: a heavy optional dependency, only for --plot

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt


    rows = max(1, len(panels))
    figure, axes = plt.subplots(rows, 1, figsize=(11, 1.9 * rows), squeeze=False)
    for row, (name, per_metric) in enumerate(panels):
        ax = axes[row][0]
        for metric in METRICS:
            pairs = per_metric.get(metric, [])
            changes = sorted(relative(b, a) for b, a in pairs if a != b)
            shown = [max(-LIMIT, min(LIMIT, c)) * 100 for c in changes]
            total = relative(sum(b for b, _ in pairs), sum(a for _, a in pairs))
            total_text = f"{total * 100:+.2f}%" if math.isfinite(total) else "n/a"
            better = "down" if LOWER_IS_BETTER[metric] else "up"
            ax.plot(range(len(shown)), shown, linewidth=1.2,
                    label=f"{metric}: {len(changes)} moved, total {total_text} ({better} is better)")
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_title(name, fontsize=9, loc="left")
        ax.set_ylabel("change (%)", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    axes[-1][0].set_xlabel("programs the metric moved, sorted by their change", fontsize=7)
    figure.subplots_adjust(left=0.07, right=0.62, top=1 - 0.25 / rows, bottom=0.35 / rows,
                           hspace=0.45)
    figure.savefig(path, dpi=72)
    plt.close(figure)
