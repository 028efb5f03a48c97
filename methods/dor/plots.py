"""Reliability diagrams and loss curves for DOR reports."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from methods.dor.calibration import confidences, ece, reliability  # noqa: E402


def reliability_diagrams(panels: Sequence[tuple[str, np.ndarray, np.ndarray]], *, n_bins: int = 10, title: str = ""):
    """One reliability diagram per (label, logits, labels): per-bin accuracy bars over the diagonal, gaps shaded."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3.0 * len(panels), 3.2), squeeze=False)
    for ax, (label, logits, labels) in zip(axes[0], panels, strict=True):
        conf, correct = confidences(logits, labels)
        b = reliability(conf, correct, n_bins)
        centers = (b.edges[:-1] + b.edges[1:]) / 2
        width = 1.0 / n_bins
        nz = b.count > 0
        ax.bar(centers[nz], b.acc[nz], width=width, edgecolor="black", color="#4c72b0", label="accuracy")
        ax.bar(
            centers[nz],
            b.conf[nz] - b.acc[nz],
            bottom=b.acc[nz],
            width=width,
            color="#dd8452",
            alpha=0.45,
            hatch="//",
            label="gap to confidence",
        )
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("confidence")
        ax.set_title(f"{label}\nECE {100 * ece(conf, correct, n_bins):.2f}%", fontsize=9)
    axes[0][0].set_ylabel("accuracy")
    axes[0][0].legend(loc="upper left", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def loss_curves(curves: dict[str, Sequence[float]], *, title: str = "training loss"):
    fig, ax = plt.subplots(figsize=(5, 3))
    for name, ys in curves.items():
        ys = np.asarray(ys, dtype=float)
        k = max(1, len(ys) // 50)
        smooth = np.convolve(ys, np.ones(k) / k, mode="valid")
        ax.plot(np.arange(len(smooth)) + k - 1, smooth, label=name)
    ax.set_xlabel("step")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
