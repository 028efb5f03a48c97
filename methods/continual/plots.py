"""Figures of the harness: accuracy-matrix heat maps and accuracy-per-task curves (matplotlib, Agg)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np


def _figure(nrows: int, ncols: int, size: tuple[float, float]):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def accuracy_matrix_figure(matrices: dict[str, np.ndarray], *, title: str = ""):
    """One heat map per head: rows = after task t, columns = task j, cell = accuracy (%)."""
    heads = list(matrices)
    n = len(heads)
    fig, axes = _figure(1, n, (3.1 * n + 0.8, 3.6))
    for i, (ax, h) in enumerate(zip(axes[0], heads)):
        A = np.asarray(matrices[h], dtype=float)
        T = A.shape[0]
        masked = np.ma.masked_invalid(A * 100)
        im = ax.imshow(masked, vmin=0, vmax=100, cmap="viridis")
        for t in range(T):
            for j in range(t + 1):
                v = A[t, j] * 100
                ax.text(j, t, f"{v:.0f}", ha="center", va="center", fontsize=7, color="white" if v < 60 else "black")
        ax.set_xticks(range(T), [str(j + 1) for j in range(T)])
        ax.set_yticks(range(T), [str(t + 1) for t in range(T)])
        ax.set_xlabel("evaluated task")
        if i == 0:
            ax.set_ylabel("after task")
        ax.set_title("\n".join(textwrap.wrap(h, 24)), fontsize=8)
    fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="accuracy (%)")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def curves_figure(curves: dict[str, dict[str, Sequence[float]]], *, title: str = ""):
    """Left: accuracy on all seen classes per task. Right: old vs new accuracy per head."""
    fig, axes = _figure(1, 2, (11, 4.2))
    left, right = axes[0]
    for i, (h, c) in enumerate(curves.items()):
        x = np.arange(1, len(c["seen"]) + 1)
        color = f"C{i}"
        left.plot(x, np.asarray(c["seen"]) * 100, marker="o", color=color, label=h)
        right.plot(x[1:], np.asarray(c["old"][1:]) * 100, marker="o", color=color, label=f"{h} old")
        right.plot(x[1:], np.asarray(c["new"][1:]) * 100, marker="x", ls="--", color=color, label=f"{h} new")
    left.set_xlabel("after task")
    left.set_ylabel("accuracy on seen classes (%)")
    left.legend(fontsize=7, loc="lower left")
    right.set_xlabel("after task")
    right.set_ylabel("old (solid) / new (dashed) accuracy (%)")
    right.legend(fontsize=6, ncol=1, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    n_tasks = max((len(c["seen"]) for c in curves.values()), default=1)
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.set_xticks(range(1, n_tasks + 1))
        ax.set_ylim(-2, 102)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
