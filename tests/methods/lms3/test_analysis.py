"""LMS3's paired bootstrap is core.stats' (one set of query indices for both arms)."""

import numpy as np
import pytest

from core.stats import paired_bootstrap_ci
from methods.lms3.analysis import paired_bootstrap


def test_paired_bootstrap_is_core_stats_paired_bootstrap():
    rng = np.random.default_rng(3)
    base = rng.normal(2.0, 1.0, 40)
    arm = base - 0.2 + rng.normal(0, 0.05, 40)
    d = paired_bootstrap(arm, base, resamples=500, seed=7)
    ci = paired_bootstrap_ci(arm, base, n_boot=500, seed=7)
    assert (d.mean, d.lo, d.hi, d.n) == (ci.estimate, ci.low, ci.high, 40)
    assert d.hi < 0 and d.mean == pytest.approx(float(np.mean(arm - base)))
    assert paired_bootstrap([], []).n == 0
