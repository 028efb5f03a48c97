"""Figures for the reports: error vs NFE (log-log), the edit trade-off, image grids."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from methods.rf_solver.convergence import ErrorPoint  # noqa: E402
from methods.rf_solver.data import tensor_to_uint8  # noqa: E402

ORDER_NAMES = {1: "Euler (vanilla RF)", 2: "RF-Solver-2", 3: "RF-Solver-3"}


def error_vs_nfe(curves: dict[str, dict[int, list[ErrorPoint]]], titles: dict[str, str]):
    """One log-log panel per flow: max-abs inversion error against NFE for each order."""
    fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 3.6), squeeze=False)
    for ax, (name, by_order) in zip(axes[0], curves.items()):
        for order, pts in sorted(by_order.items()):
            ax.loglog([p.nfe for p in pts], [p.error for p in pts], "o-", label=ORDER_NAMES[order], ms=3)
        ax.set_title(titles.get(name, name))
        ax.set_xlabel("NFE")
        ax.set_ylabel("max |error|")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def recon_vs_nfe(rows: Sequence[dict], dataset: str):
    """Reconstruction MSE against NFE for Euler and RF-Solver-2 (trained model)."""
    fig, ax = plt.subplots(figsize=(4.5, 3.6))
    for solver in ("Euler (equal NFE)", "Euler (equal steps)", "RF-Solver-2"):
        pts = sorted((r["nfe"], r["mse"]) for r in rows if r["solver"] == solver and r["dataset"] == dataset)
        if pts:
            ax.loglog(*zip(*pts), "o-", label=solver, ms=4)
    ax.set_xlabel("NFE (inversion + sampling)")
    ax.set_ylabel("reconstruction MSE")
    ax.set_title(f"reconstruction, {dataset}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def tradeoff(
    ks: Sequence[int], target_acc: Sequence[float], mse_to_source: Sequence[float], sem: Sequence[float] | None = None
):
    """Target-label accuracy and MSE to the source against the number of injected steps k."""
    fig, ax1 = plt.subplots(figsize=(5, 3.6))
    ax1.plot(ks, target_acc, "o-", color="tab:blue", label="target-label accuracy")
    ax1.set_xlabel("inject steps k")
    ax1.set_ylabel("target-label accuracy", color="tab:blue")
    ax1.set_ylim(0, 1)
    ax2 = ax1.twinx()
    ax2.errorbar(ks, mse_to_source, yerr=sem, fmt="s--", color="tab:red", label="MSE to source", ms=4)
    ax2.set_ylabel("pixel MSE to source", color="tab:red")
    ax1.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def image_grid(rows: Sequence[torch.Tensor], scale: int = 4) -> np.ndarray:
    """Stack batches of images (each (B, C, H, W) in [−1, 1]) into one uint8 grid, one row per batch."""
    lines = []
    for batch in rows:
        tiles = [tensor_to_uint8(x) for x in batch]
        tiles = [np.pad(t, ((1, 1), (1, 1)) + (((0, 0),) if t.ndim == 3 else ()), constant_values=255) for t in tiles]
        lines.append(np.concatenate(tiles, axis=1))
    grid = np.concatenate(lines, axis=0)
    return grid.repeat(scale, axis=0).repeat(scale, axis=1)


def ablation(ab) -> plt.Figure:
    """Two panels over the 12 grid cells: target accuracy per k (Wilson CIs) and Δ MSE (k = N − k = 0, bootstrap CI)."""
    rows = ab.cell_rows()
    cells = ab.cells()
    kn = max(ab.ks)
    by = {(r["keys"], r["cfg"], r["blocks"], r["k"]): r for r in rows}
    short_cfg = {
        "V into both CFG halves": "both",
        "V into the conditional half only": "cond",
        "guidance 1 (no CFG)": "g=1",
    }
    names = [f"{k[:4]}/{short_cfg.get(c, c)}/{'all' if b == 'all' else 'late'}" for k, c, b in cells]
    xs = np.arange(len(cells))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    width = 0.8 / len(ab.ks)
    for i, k in enumerate(ab.ks):
        acc = np.array([by[(*c, k)]["target_acc"] for c in cells])
        lo = np.array([by[(*c, k)]["target_acc_ci"][0] for c in cells])
        hi = np.array([by[(*c, k)]["target_acc_ci"][1] for c in cells])
        ax1.bar(
            xs + (i - (len(ab.ks) - 1) / 2) * width, acc, width, yerr=[acc - lo, hi - acc], capsize=2, label=f"k={k}"
        )
    ax1.axhline(0.8, color="grey", ls=":", lw=1)
    ax1.set_ylabel("target-label accuracy")
    ax1.set_ylim(0, 1)
    ax1.legend(fontsize=8, ncol=len(ab.ks))
    d = np.array([by[(*c, kn)]["d_mse"] for c in cells])
    lo = np.array([by[(*c, kn)]["d_mse_ci"][0] for c in cells])
    hi = np.array([by[(*c, kn)]["d_mse_ci"][1] for c in cells])
    ax2.bar(xs, d, 0.6, yerr=[d - lo, hi - d], capsize=2, color=["tab:green" if v < 0 else "tab:red" for v in d])
    ax2.axhline(0, color="black", lw=0.8)
    ax2.set_ylabel(f"Δ MSE to source\n(k={kn} − k=0)")
    ax2.set_xticks(xs)
    ax2.set_xticklabels(names, rotation=45, ha="right", fontsize=8)
    ax2.set_xlabel("V keys / CFG handling / blocks")
    for ax in (ax1, ax2):
        ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
