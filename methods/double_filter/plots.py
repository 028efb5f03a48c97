"""Figures: kept patches over the image, the GA's fitness curve, score against FLOPs and latency."""

from __future__ import annotations

from typing import Any

import numpy as np

ARM_STYLE = {
    "none": ("no filter", "o", "black"),
    "ipf": ("patch filter (IPF)", "s", "tab:blue"),
    "alf": ("layer filter (ALF)", "^", "tab:orange"),
    "both": ("both (Double-Filter)", "D", "tab:green"),
    "random_patches": ("random patches", "x", "tab:gray"),
    "fg_only": ("foreground-first", "v", "tab:purple"),
    "random_mask": ("random mask", "+", "tab:red"),
}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def overlay(images, keeps, fgs, boxes, patch: int, titles: list[str] | None = None) -> Any:
    """A row per image: the image, then the kept patches (dropped ones greyed); foreground patches outlined."""
    plt = _plt()
    n = len(images)
    fig, axes = plt.subplots(n, 2, figsize=(4.2, 2.1 * n), squeeze=False)
    for r in range(n):
        img = np.asarray(images[r]).transpose(1, 2, 0)
        size = img.shape[0]
        g = size // patch
        mask = np.zeros(g * g, dtype=bool)
        mask[np.asarray(keeps[r])] = True
        shade = img.copy()
        for p in np.flatnonzero(~mask):
            y, x = divmod(int(p), g)
            shade[y * patch : (y + 1) * patch, x * patch : (x + 1) * patch] = 0.5 * shade[
                y * patch : (y + 1) * patch, x * patch : (x + 1) * patch
            ] + 0.5 * np.array([0.85, 0.85, 0.85])
        axes[r, 0].imshow(img, interpolation="nearest")
        axes[r, 1].imshow(shade, interpolation="nearest")
        for x0, y0, x1, y1 in np.asarray(boxes[r]).reshape(-1, 4):
            axes[r, 0].add_patch(plt.Rectangle((x0 - 0.5, y0 - 0.5), x1 - x0, y1 - y0, fill=False, ec="lime", lw=1.2))
        for p in range(g * g):
            y, x = divmod(p, g)
            if fgs is not None and fgs[r][p]:
                axes[r, 1].add_patch(
                    plt.Rectangle((x * patch - 0.5, y * patch - 0.5), patch, patch, fill=False, ec="yellow", lw=1)
                )
            if mask[p]:
                axes[r, 1].add_patch(
                    plt.Rectangle(
                        (x * patch - 0.5, y * patch - 0.5), patch, patch, fill=False, ec="red", lw=0.6, ls=":"
                    )
                )
        axes[r, 0].set_title(titles[r] if titles else "image + detector boxes", fontsize=7)
        axes[r, 1].set_title(f"kept {int(mask.sum())}/{g * g} (grey = dropped, yellow = fg)", fontsize=7)
        for a in axes[r]:
            a.set_axis_off()
    fig.tight_layout()
    return fig


def fitness_curves(curves: list[dict[str, Any]]) -> Any:
    """Best-so-far (solid) and population-mean (dashed) fitness per generation; one colour per task/seed."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i, c in enumerate(curves):
        colour = f"C{i % 10}"
        gens = np.arange(len(c["best_curve"]))
        ax.plot(gens, c["best_curve"], color=colour, label=c["label"])
        ax.plot(gens, c["mean_curve"], color=colour, ls="--", alpha=0.5)
    ax.set_xlabel("generation")
    ax.set_ylabel("fitness  Acc_val − γ·FLOPs/FLOPs(1)")
    ax.set_title("ALF genetic search (solid: best so far, dashed: population mean)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def score_vs_cost(summary: dict[str, dict[str, dict]], metric_names: dict[str, str]) -> Any:
    """Per task: score (mean ± std over seeds) against MFLOPs (top) and latency (bottom), one marker per arm."""
    plt = _plt()
    tasks = list(summary)
    fig, axes = plt.subplots(2, len(tasks), figsize=(3.6 * len(tasks), 6), squeeze=False)
    for j, task in enumerate(tasks):
        for arm, cell in summary[task].items():
            label, marker, colour = ARM_STYLE.get(arm, (arm, "o", "k"))
            for row, key, scale in ((0, "flops", 1e-6), (1, "latency", 1.0)):
                axes[row, j].errorbar(
                    cell[key] * scale, 100 * cell["score"], yerr=100 * cell["score_std"], marker=marker, color=colour,
                    capsize=3, ls="none", label=label,
                )  # fmt: skip
        axes[0, j].set_title(f"{task}", fontsize=10)
        axes[0, j].set_xlabel("MFLOPs / sample (analytic)")
        axes[1, j].set_xlabel("ms / sample incl. patch selection (measured, shared CPU)")
        for row in range(2):
            axes[row, j].set_ylabel(f"{metric_names[task]} (%)")
            axes[row, j].grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def val_curves(runs: list[dict[str, Any]], metric_names: dict[str, str]) -> Any:
    """Per task: every arm's validation score against fine-tuning steps (mean over seeds; the convergence check)."""
    plt = _plt()
    tasks = list(dict.fromkeys(r["task"] for r in runs))
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.8 * len(tasks), 3.4), squeeze=False)
    for j, task in enumerate(tasks):
        ax = axes[0, j]
        arms = [a for a in ARM_STYLE if any(a in r["arms"] for r in runs if r["task"] == task)]
        for arm in arms:
            curves = [
                r["arms"][arm]["val_curve"] for r in runs if r["task"] == task and r["arms"][arm].get("val_curve")
            ]
            if not curves:
                continue
            n = min(len(c) for c in curves)
            steps = [curves[0][i][0] for i in range(n)]
            mean = np.mean([[c[i][1] for i in range(n)] for c in curves], axis=0)
            label, marker, colour = ARM_STYLE[arm]
            ax.plot(steps, 100 * mean, marker=marker, ms=3, color=colour, label=label)
        ax.set_title(task, fontsize=10)
        ax.set_xlabel("fine-tuning step")
        ax.set_ylabel(f"validation {metric_names[task]} (%)")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig
