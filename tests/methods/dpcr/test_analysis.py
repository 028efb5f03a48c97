"""Own-γ selection (cross-fitted multi-class hold-out), t-intervals and the CIP energy table."""

import math

import numpy as np
import pytest
from scipy import stats

from methods.dpcr.analysis import FinalPredictions, _halves, own_gamma, paired, sweep_heads, t_interval


def test_t_interval_matches_scipy_and_handles_edge_cases():
    v = [0.61, 0.70, 0.66, 0.72, 0.58]
    ci = t_interval(v)
    lo, hi = stats.t.interval(0.95, len(v) - 1, loc=np.mean(v), scale=stats.sem(v))
    assert ci.mean == pytest.approx(np.mean(v)) and ci.lo == pytest.approx(lo) and ci.hi == pytest.approx(hi)
    assert ci.n == 5 and ci.excludes_zero
    assert t_interval([0.5]).lo == 0.5 and math.isnan(t_interval([]).mean)
    d = paired([0.7, 0.8, 0.75], [0.6, 0.7, 0.66])
    assert d.mean == pytest.approx(0.0966666, abs=1e-6) and d.excludes_zero
    assert d.fmt(sign=True).startswith("+9.7 [")


def test_halves_are_a_per_class_partition():
    y = np.repeat(np.arange(4), [5, 6, 7, 8])
    a, b = _halves(y, seed=3)
    assert sorted(np.concatenate([a, b]).tolist()) == list(range(len(y)))
    for c in range(4):
        assert abs((y[a] == c).sum() - (y[b] == c).sum()) <= 1


def test_own_gamma_picks_on_one_half_and_scores_on_the_other():
    heads = ["tssp", "tssp_g1", "tssp_g10", "tssp_g100", "dpcr_g1", "dpcr_literal_g1"]
    assert list(sweep_heads(heads, "tssp")) == [1.0, 10.0, 100.0]
    assert list(sweep_heads(heads, "dpcr")) == [1.0]  # dpcr_literal_g1 is not a dpcr sweep head
    y = np.repeat(np.arange(2), 50)
    a, b = _halves(y, seed=7)
    good_a = np.zeros(100, bool)
    good_a[a] = True  # γ = 10 is right on half a only, γ = 100 on half b only, γ = 1 on 60 % of everything
    good_b = np.zeros(100, bool)
    good_b[b] = True
    mid = np.random.default_rng(0).random(100) < 0.6
    final = FinalPredictions([y], [{"tssp_g1": mid, "tssp_g10": good_a, "tssp_g100": good_b}])
    o = own_gamma(final, heads, "tssp", [7])
    assert o.picks == [(10.0, 100.0)]  # each half prefers the γ that is perfect on it ...
    assert o.accuracy == [0.0]  # ... and that γ is wrong on every sample of the other half
    assert own_gamma(final, ["lwf"], "tssp", [7]) is None
