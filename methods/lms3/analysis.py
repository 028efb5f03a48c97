"""Statistics of the LMS3 experiment: paired bootstrap, per-query Spearman with a sign
test (the theory check, spec §6.1 item 6), and how query-dependent a selection is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.stats import paired_bootstrap_ci


@dataclass(frozen=True)
class PairedDiff:
    """Mean of ``arm − baseline`` over queries with a paired bootstrap 95 % CI."""

    mean: float
    lo: float
    hi: float
    n: int


def paired_bootstrap(
    arm: Sequence[float], baseline: Sequence[float], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> PairedDiff:
    """Percentile bootstrap of the mean paired difference (queries resampled with replacement, one set of
    indices for both arms: :func:`core.stats.paired_bootstrap_ci`)."""
    ci = paired_bootstrap_ci(arm, baseline, n_boot=resamples, seed=seed, level=level)
    return PairedDiff(ci.estimate, ci.low, ci.high, ci.n)


@dataclass(frozen=True)
class SignTest:
    """Mean of per-query values and a two-sided sign test of their median against 0."""

    mean: float
    positive: int
    negative: int
    p_value: float
    n: int


def sign_test(values: Sequence[float]) -> SignTest:
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=np.float64)
    pos, neg = int((v > 0).sum()), int((v < 0).sum())
    p = float(stats.binomtest(pos, pos + neg, 0.5).pvalue) if pos + neg else float("nan")
    return SignTest(float(v.mean()) if v.size else float("nan"), pos, neg, p, int(v.size))


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman ρ, NaN when either side is constant."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def share_explained_by_norm(sim_rows: np.ndarray, p_norm: np.ndarray) -> float:
    """Mean over queries of corr(Sim_q(X), ‖P x_X‖)² across the pool.

    1.0 means ``‖x_q − P x_X‖`` is an affine function of ``‖P x_X‖`` alone, so the
    Sim ranking is the same for every query (selection collapses).
    """
    out = []
    for row in np.atleast_2d(sim_rows):
        if np.ptp(row) == 0 or np.ptp(p_norm) == 0:
            continue
        out.append(float(np.corrcoef(row, p_norm)[0, 1]) ** 2)
    return float(np.mean(out)) if out else float("nan")


def distinct(choices: Sequence[Sequence[int]]) -> int:
    """How many different demonstrations appear over all queries' choices."""
    return len({i for c in choices for i in c})
