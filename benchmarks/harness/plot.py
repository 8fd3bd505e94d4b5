"""Plotting a result: a figure of panels, the few shapes the benchmarks draw, saved beside RESULTS.md.

matplotlib is imported only when a script draws (``pyplot()``, on the Agg
backend: no display), so a script that only prints needs none.

- ``panels(count, size)``: a figure and its axes, one panel per env or task;
- ``grouped_bars``: a bar per series in each group (systems side by side per
  task or size); ``hbars``: one labelled bar per row, top to bottom;
  ``size_lines``: a value against num_envs, log-log, a line per system;
  ``return_curves``: training runs' mean return against minutes;
- ``save(figure, path, title=..., info=...)``: the title with the machine
  under it, a legend below the panels if asked, tight layout, the PNG.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .record import machine_line

__all__ = ["grouped_bars", "hbars", "panels", "pyplot", "return_curves", "save", "size_lines"]


def pyplot():
    """matplotlib.pyplot on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def panels(count: int = 1, size: tuple[float, float] = (6.5, 5.0), **kwargs) -> tuple[Any, list]:
    """A figure of ``count`` panels side by side, each ``size`` inches; returns (figure, [axes])."""
    figure, axes = pyplot().subplots(1, count, figsize=(size[0] * count, size[1]), squeeze=False, **kwargs)
    return figure, list(axes[0])


def grouped_bars(ax, groups: Sequence[str], series: dict[str, Sequence[float]],
                 styles: dict[str, dict] | None = None) -> None:
    """One bar per series in each group, side by side, with group ticks, a legend and a y grid.
    ``series[label][j]`` is that series' value in ``groups[j]``; ``styles[label]``: bar keywords (color, hatch)."""
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series.items()):
        offset = (i - (len(series) - 1) / 2) * width
        ax.bar([j + offset for j in range(len(groups))], values, width, label=label, **(styles or {}).get(label, {}))
    ax.set_xticks(range(len(groups)), groups)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def hbars(ax, labels: Sequence[str], values: Sequence[float], colors: Sequence[str] | None = None,
          hatches: Sequence[str | None] | None = None, annotate: str | None = None) -> None:
    """One horizontal bar per label, the first on top, with an x grid; ``annotate`` formats each value at its
    bar's end (e.g. ``"{:,.0f}"``)."""
    bars = ax.barh(range(len(labels)), values, color=colors, hatch=hatches, edgecolor="white")
    ax.set_yticks(range(len(labels)), labels)
    if annotate:
        for bar, value in zip(bars, values):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, " " + annotate.format(value),
                    va="center", fontsize=8)
    ax.invert_yaxis()
    ax.grid(True, axis="x", alpha=0.3)


def size_lines(ax, series: dict[str, Sequence[tuple[int, float]]], styles: dict[str, dict] | None = None) -> None:
    """A line per series of (num_envs, value) points, both axes log, a tick at each num_envs drawn."""
    sizes: set[int] = set()
    for label, points in series.items():
        if points:
            points = sorted(points)
            sizes.update(n for n, _ in points)
            ax.plot(*zip(*points), label=label, **(styles or {}).get(label, {}))
    ax.set(xscale="log", yscale="log", xlabel="num_envs")
    ax.set_xticks(sorted(sizes), [str(n) for n in sorted(sizes)])
    ax.set_xticks([], minor=True)
    ax.grid(True, which="both", alpha=0.3)


def return_curves(ax, runs: Sequence[tuple[str | None, str, Sequence[tuple[int, float, float]]]],
                  target: float | None = None) -> None:
    """Training runs' mean return (last 20 episodes) against wall minutes: ``runs`` holds (label or None,
    colour, curve), a curve being ``train()``'s [(frames, seconds, mean return)]; ``target`` dashed."""
    for label, color, curve in runs:
        ax.plot([seconds / 60 for _, seconds, _ in curve], [mean for _, _, mean in curve], color=color, label=label,
                linewidth=1.2)
    if target is not None:
        ax.axhline(target, color="gray", linestyle="--", linewidth=1)
    ax.set_xlabel("minutes")
    ax.grid(alpha=0.3)


def save(figure, path: Path, *, title: str | None = None, info: dict[str, str] | None = None,
         legend_below: int = 0, dpi: int = 120) -> None:
    """Titles ``figure`` (the machine on a line under ``title`` when ``info`` is given), puts one legend for
    every panel below them in ``legend_below`` columns if asked (fewer if the figure is narrow), lays it out and
    writes it as a PNG."""
    plt = pyplot()
    bottom = 0.0
    if legend_below:
        handles, labels = max((ax.get_legend_handles_labels() for ax in figure.axes), key=lambda hl: len(hl[1]))
        columns = max(1, min(legend_below, int(figure.get_figwidth() // 3.5)))
        rows = -(-len(labels) // columns)
        bottom = min(0.4, (0.15 + 0.22 * rows) / figure.get_figheight())  # a legend row is ~0.22 inch
        figure.legend(handles, labels, loc="lower center", ncol=columns, fontsize=9, frameon=False)
    if title or info:
        figure.suptitle("\n".join(part for part in (title, info and machine_line(info)) if part), fontsize=10)
    figure.tight_layout(rect=(0, bottom, 1, 1))
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    print(f"wrote {path}")
