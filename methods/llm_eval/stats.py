"""Statistics every LLM evaluation reports: mean ± standard error over repeats, bootstrap CIs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MeanSE:
    mean: float
    se: float
    n: int


def mean_se(values: Sequence[float]) -> MeanSE:
    """Mean and standard error, SD with ``ddof=1`` over √n (the MultiCogEval notebook's SE); 0 for n < 2."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return MeanSE(float("nan"), float("nan"), 0)
    se = float(np.std(a, ddof=1) / np.sqrt(a.size)) if a.size > 1 else 0.0
    return MeanSE(float(a.mean()), se, int(a.size))


@dataclass(frozen=True)
class BootstrapCI:
    estimate: float
    low: float
    high: float
    n: int

    def overlaps(self, other: BootstrapCI) -> bool:
        return self.low <= other.high and other.low <= self.high

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable[[np.ndarray], float] = np.mean,
    *,
    n_boot: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> BootstrapCI:
    """Percentile bootstrap (1 − alpha) CI of ``stat`` over resampled ``values`` (fixed seed)."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return BootstrapCI(float("nan"), float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(n_boot, a.size))
    boots = np.array([stat(a[i]) for i in idx])
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float(stat(a)), float(lo), float(hi), int(a.size))


def bootstrap_diff_ci(
    a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, alpha: float = 0.05, seed: int = 0
) -> BootstrapCI:
    """CI of mean(a) − mean(b), resampling each group independently."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return BootstrapCI(float("nan"), float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    bx = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    by = y[rng.integers(0, y.size, size=(n_boot, y.size))].mean(axis=1)
    lo, hi = np.quantile(bx - by, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float(x.mean() - y.mean()), float(lo), float(hi), int(x.size + y.size))
