"""Figures: recall per variant, expert usage per (direction, branch), a caption's routing, the retrieved digits."""

from __future__ import annotations

from typing import Any

import numpy as np


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def recall_bars(rows: list[tuple[str, float, float, float, float]], chance: float, oracle: float) -> Any:
    """rows: (variant, i2t R@1 mean, std, t2i R@1 mean, std)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(rows) + 2), 3.6))
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r[1] for r in rows], 0.4, yerr=[r[2] for r in rows], label="image→text R@1", capsize=3)
    ax.bar(x + 0.2, [r[3] for r in rows], 0.4, yerr=[r[4] for r in rows], label="text→image R@1", capsize=3)
    ax.axhline(oracle, ls="--", c="k", lw=1, label=f"oracle (class+ink+slant) {oracle:.3f}")
    ax.axhline(chance, ls=":", c="r", lw=1, label=f"chance {chance:.4f}")
    ax.set_xticks(x, [r[0] for r in rows], rotation=30, ha="right")
    ax.set_ylabel("exact-pair R@1 (test, 597)")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title("Retrieval per variant (mean ± std over seeds)")
    return fig


def expert_usage(usage: dict[str, dict[str, Any]], title: str = "Expert usage (mean routing weight)") -> Any:
    """Heatmap rows = (direction, branch), columns = experts; annotated with the top-k selection rate."""
    plt = _plt()
    keys = [k for k in ("t2i/pred", "t2i/cl", "i2t/pred", "i2t/cl") if k in usage]
    w = np.array([usage[k]["weight"] for k in keys])
    sel = np.array([usage[k]["selected"] for k in keys])
    fig, ax = plt.subplots(figsize=(1.0 * w.shape[1] + 2.5, 0.6 * len(keys) + 1.4))
    im = ax.imshow(w, cmap="viridis", aspect="auto", vmin=0)
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            ax.text(j, i, f"{w[i, j]:.2f}\n{100 * sel[i, j]:.0f}%", ha="center", va="center", fontsize=7, color="w")
    ax.set_yticks(range(len(keys)), keys)
    ax.set_xticks(range(w.shape[1]), [f"E{j}" for j in range(w.shape[1])])
    ax.set_title(title + "\n(cell: mean weight / % of tokens routed there)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.04)
    return fig


def token_routing(tokens: list[str], routing: dict[str, list[list[float]]]) -> Any:
    """One caption's per-token routing weights (t→i), one panel per branch."""
    plt = _plt()
    branches = [b for b in ("pred", "cl") if b in routing]
    fig, axes = plt.subplots(1, len(branches), figsize=(4.2 * len(branches), 0.32 * len(tokens) + 1.5), squeeze=False)
    for ax, b in zip(axes[0], branches, strict=True):
        w = np.array(routing[b])[: len(tokens)]
        ax.imshow(w, cmap="magma", aspect="auto", vmin=0)
        ax.set_yticks(range(len(tokens)), [repr(t.strip()) if t.strip() else repr(t) for t in tokens], fontsize=7)
        ax.set_xticks(range(w.shape[1]), [f"E{j}" for j in range(w.shape[1])])
        ax.set_title(f"t→i {b} branch: weight per token", fontsize=9)
    return fig


def digit_grid(images: np.ndarray, labels: list[str]) -> Any:
    plt = _plt()
    n = len(images)
    fig, axes = plt.subplots(1, n, figsize=(1.3 * n, 1.7), squeeze=False)
    for ax, im, lab in zip(axes[0], images, labels, strict=True):
        ax.imshow(im, cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(lab, fontsize=7)
        ax.axis("off")
    return fig


def sampling_curve(p_t2i: list[float], val: list[dict[str, float]]) -> Any:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3))
    ep = np.arange(1, len(p_t2i) + 1)
    ax.plot(ep, [v["i2t_r1"] for v in val], label="val i→t R@1")
    ax.plot(ep, [v["t2i_r1"] for v in val], label="val t→i R@1")
    ax.plot(ep, p_t2i, "k--", label="P(t2i step) next epoch")
    ax.set_xlabel("epoch")
    ax.legend(fontsize=7)
    ax.set_title("AGD with recall-based task sampling (seed 0)", fontsize=9)
    return fig
