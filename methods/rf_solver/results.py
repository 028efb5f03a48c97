"""What the rf_solver studies return: plain results with the statistics read off them (no solving here).

:mod:`methods.rf_solver.experiment` fills these; :mod:`methods.rf_solver.report` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from core.stats import bootstrap_ci, wilson
from methods.rf_solver.convergence import ErrorPoint


@dataclass
class AnalyticResult:
    """Error curves per flow ("gauss", "gauss_shift", "mog") and order, slopes, round trips."""

    curves: dict[str, dict[int, list[ErrorPoint]]]
    slopes: dict[str, dict[int, float]]
    round_trips: list[dict[str, Any]]
    #: flow → order → each sample's own observed order (slope of its |error| over the fitted NFE range)
    sample_orders: dict[str, dict[int, list[float]]] = field(default_factory=dict)


@dataclass
class ReconRow:
    """One reconstruction setting on one dataset."""

    dataset: str
    solver: str
    steps: int
    nfe: int
    mse: float
    psnr: float
    ssim: float
    seconds: float
    per_image: list[float] = field(default_factory=list)  # each image's MSE


@dataclass
class TradeoffResult:
    """Per-k edit metrics over the evaluated images."""

    ks: list[int]
    target_acc: list[float]
    source_acc: list[float]
    mse_to_source: list[float]
    mse_sem: list[float]
    num_images: int
    num_steps: int
    guidance: float
    examples: dict[int, torch.Tensor] = field(default_factory=dict)
    sources: torch.Tensor | None = None
    targets: torch.Tensor | None = None
    hits: dict[int, list[int]] = field(default_factory=dict)  # k → per image: 1 when scored as the target label
    mses: dict[int, list[float]] = field(default_factory=dict)  # k → per image: MSE to the source

    def monotone_violations(self) -> int:
        return sum(b > a for a, b in zip(self.mse_to_source, self.mse_to_source[1:]))

    def spearman(self) -> float:
        from scipy.stats import spearmanr

        return float(spearmanr(self.ks, self.mse_to_source).statistic)


# --- RF-Edit ablation grid (issue #13) -------------------------------------------------------------

#: The grid's factors. The first level of each is the spec's configuration (§3.5).
ABLATION_KEYS = ("interval", "eval")
ABLATION_CFG: tuple[tuple[str, str, float | None], ...] = (
    # (name, cfg_halves, guidance; None = the edit's guidance)
    ("V into both CFG halves", "both", None),
    ("V into the conditional half only", "cond", None),
    ("guidance 1 (no CFG)", "both", 1.0),
)
ABLATION_BLOCKS = ("all", "later_half")


@dataclass
class AblationResult:
    """Per cell (keys, cfg, blocks) and k: per-image target hits and MSE to the source; same-label reconstruction."""

    ks: list[int]
    num_steps: int
    guidance: float
    num_images: int
    hits: dict[tuple[str, str, str, int], np.ndarray]
    mses: dict[tuple[str, str, str, int], np.ndarray]
    recon: dict[tuple[str, str, int], np.ndarray]  # (keys, blocks, k) → per-image MSE, same label, guidance 1
    recon_ks: list[int]
    blocks: dict[str, list[int]]
    seconds: float = 0.0

    def cells(self) -> list[tuple[str, str, str]]:
        return [(k, c[0], b) for k in ABLATION_KEYS for c in ABLATION_CFG for b in ABLATION_BLOCKS]

    def cell_rows(self, n_boot: int = 2000) -> list[dict[str, Any]]:
        """Target accuracy (Wilson CI) and MSE to source per cell and k, with paired changes from k = 0."""
        rows = []
        for keys, cfg, blocks in self.cells():
            h0 = self.hits[(keys, cfg, blocks, 0)].astype(float)
            m0 = self.mses[(keys, cfg, blocks, 0)]
            for k in self.ks:
                h, m = self.hits[(keys, cfg, blocks, k)].astype(float), self.mses[(keys, cfg, blocks, k)]
                rows.append(
                    {
                        "keys": keys,
                        "cfg": cfg,
                        "blocks": blocks,
                        "k": k,
                        "target_acc": float(h.mean()),
                        "target_acc_ci": wilson(int(h.sum()), len(h)),
                        "mse": float(m.mean()),
                        "mse_ci": bootstrap_ci(m, n_boot=n_boot).bounds,
                        "d_acc": float((h - h0).mean()),
                        "d_acc_ci": bootstrap_ci(h - h0, n_boot=n_boot).bounds,
                        "d_mse": float((m - m0).mean()),
                        "d_mse_ci": bootstrap_ci(m - m0, n_boot=n_boot).bounds,
                    }
                )
        return rows

    def factor_effects(self, k: int, n_boot: int = 2000) -> list[dict[str, Any]]:
        """Main effect of each factor on the k-vs-0 change, averaged over the other factors, paired per image.

        For each factor level, the per-image change (metric at k − metric at k = 0) is averaged over
        the cells of the other factors; the effect is that average at each non-default level minus the
        default level's, with a paired bootstrap CI over images.
        """
        out = []
        levels = {
            "keys": list(ABLATION_KEYS),
            "cfg": [c[0] for c in ABLATION_CFG],
            "blocks": list(ABLATION_BLOCKS),
        }
        for pos, (factor, lv) in enumerate(levels.items()):

            def change(level: str, metric: str, pos: int = pos) -> np.ndarray:
                store = self.hits if metric == "acc" else self.mses
                per = [
                    store[(*c, k)].astype(float) - store[(*c, 0)].astype(float) for c in self.cells() if c[pos] == level
                ]
                return np.mean(per, axis=0)

            for level in lv[1:]:
                for metric in ("acc", "mse"):
                    diff = change(level, metric) - change(lv[0], metric)
                    out.append(
                        {
                            "factor": factor,
                            "level": level,
                            "vs": lv[0],
                            "metric": metric,
                            "effect": float(diff.mean()),
                            "ci": bootstrap_ci(diff, n_boot=n_boot).bounds,
                        }
                    )
        return out
