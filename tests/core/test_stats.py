"""core.stats: the shared report statistics, and that they reproduce the private copies they replace.

The ``_old_*`` functions below are the copies the packages had before core.stats (verbatim but for their
names); each test feeds both the same fixed inputs and compares the outputs.
"""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from core import stats
from core.stats import (
    FAILS,
    HOLDS,
    NOT_RESOLVED,
    Interval,
    bootstrap_ci,
    bootstrap_diff_ci,
    bootstrap_indices,
    fmt_mean_sd,
    mean_sd,
    normal_interval,
    paired_bootstrap_ci,
    percentile_interval,
    t_interval,
    verdict,
    wilson,
)

RNG = np.random.default_rng(12345)
SAMPLES = [RNG.normal(0.3, 1.0, n) for n in (1, 2, 3, 7, 9, 40, 130, 257)]


# --- the old copies ------------------------------------------------------------------------------
def _old_llm_eval_bootstrap_ci(values, stat=np.mean, *, n_boot=2000, alpha=0.05, seed=0):  # methods/llm_eval/stats.py
    a = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(n_boot, a.size))
    boots = np.array([stat(a[i]) for i in idx])
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return float(stat(a)), float(lo), float(hi), int(a.size)


def _old_llm_eval_diff(a, b, *, n_boot=2000, alpha=0.05, seed=0):  # methods/llm_eval/stats.py
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    bx = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    by = y[rng.integers(0, y.size, size=(n_boot, y.size))].mean(axis=1)
    lo, hi = np.quantile(bx - by, [alpha / 2, 1 - alpha / 2])
    return float(x.mean() - y.mean()), float(lo), float(hi), int(x.size + y.size)


def _old_llm_eval_mean_se(values):  # methods/llm_eval/stats.py
    a = np.asarray(values, dtype=float)
    se = float(np.std(a, ddof=1) / np.sqrt(a.size)) if a.size > 1 else 0.0
    return float(a.mean()), se, int(a.size)


def _old_lms3_paired(arm, baseline, *, resamples=2000, seed=0, level=0.95):  # methods/lms3/analysis.py
    d = np.asarray(arm, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    a = (1.0 - level) / 2.0
    return float(d.mean()), float(np.quantile(means, a)), float(np.quantile(means, 1 - a)), int(d.size)


def _old_rf_bootstrap(values, n_boot=2000, seed=0, level=0.95):  # methods/rf_solver/experiments.py
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    means = values[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _old_rf_wilson(successes, n, z=1.96):  # methods/rf_solver/experiments.py
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return float(centre - half), float(centre + half)


def _old_pae_wilson(k, n, z=1.96):  # agents/pae/compare.py
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _old_clinical_bootstrap(correct, *, n_boot=2000, seed=0):  # methods/clinical_got/metrics.py
    x = np.asarray(correct, dtype=float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, (n_boot, x.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _old_any4_ratio(nll_a, nll_b, tokens_per_window, n_boot=2000, seed=0):  # methods/any4/evaluate.py
    a, b = np.asarray(nll_a, dtype=float), np.asarray(nll_b, dtype=float)
    ratio = math.exp((a.sum() - b.sum()) / (len(a) * tokens_per_window))
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n_boot, len(a)))
    boot = np.exp((a[idx].sum(1) - b[idx].sum(1)) / (len(a) * tokens_per_window))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return ratio, float(lo), float(hi)


def _old_defame_paired_acc(gold, pred_a, pred_b, *, n_boot=2000, seed=0):  # agents/defame/evaluate.py (accuracy)
    def acc(g, p):
        return sum(x == y for x, y in zip(g, p)) / len(g)

    rng = random.Random(seed)
    n, d = len(gold), []
    for _ in range(n_boot):
        idx = [rng.randrange(n) for _ in range(n)]
        g = [gold[i] for i in idx]
        d.append(acc(g, [pred_a[i] for i in idx]) - acc(g, [pred_b[i] for i in idx]))
    d.sort()
    lo, hi = int(0.025 * n_boot), min(n_boot - 1, int(0.975 * n_boot))
    return d[lo], d[hi]


def _old_dpcr_t(values, level=0.95):  # methods/dpcr/analysis.py
    from scipy import stats as sps

    v = np.asarray([x for x in values if not math.isnan(float(x))], dtype=float)
    m = float(v.mean())
    if v.size == 1:
        return m, m, m
    half = float(sps.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - half, m + half


def _old_m3_fmt(xs, pct=True):  # methods/m3_jepa/report.py
    a = np.asarray(xs, dtype=float)
    m, s = float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0
    f = 100.0 if pct else 1.0
    return f"{f * m:.1f} ± {f * s:.1f}" if pct else f"{m:.3g} ± {s:.2g}"


def _old_continual_mean_std(values):  # methods/continual/metrics.py
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std())


# --- reproducing them ----------------------------------------------------------------------------
@pytest.mark.parametrize("x", SAMPLES[1:], ids=lambda x: f"n{len(x)}")
def test_bootstrap_ci_reproduces_llm_eval_rf_solver_and_clinical_got(x):
    ci = bootstrap_ci(x)
    assert (ci.estimate, ci.low, ci.high, ci.n) == _old_llm_eval_bootstrap_ci(x)
    assert ci.bounds == _old_clinical_bootstrap(x)
    assert ci.high == _old_rf_bootstrap(x)[1]
    # rf_solver's lower tail was cut at (1 - 0.95) / 2 = 0.025000000000000022, not 0.025: a last-bits difference
    assert ci.low == pytest.approx(_old_rf_bootstrap(x)[0], rel=1e-12, abs=1e-15)
    assert bootstrap_ci(x, n_boot=500, seed=3).bounds == _old_clinical_bootstrap(x, n_boot=500, seed=3)


@pytest.mark.parametrize("x", SAMPLES[2:5], ids=lambda x: f"n{len(x)}")
def test_bootstrap_ci_with_a_statistic_reproduces_llm_eval(x):
    old = _old_llm_eval_bootstrap_ci(x, np.median, n_boot=300, seed=5)
    ci = bootstrap_ci(x, np.median, n_boot=300, seed=5)
    assert (ci.estimate, ci.low, ci.high, ci.n) == old
    vec = bootstrap_ci(x, lambda r: np.median(r, axis=1), n_boot=300, seed=5, vectorized=True)
    assert (vec.estimate, vec.low, vec.high) == old[:3]


@pytest.mark.parametrize("n", [3, 12, 61])
def test_paired_bootstrap_reproduces_lms3(n):
    a, b = RNG.normal(0.5, 1, n), RNG.normal(0.2, 1, n)
    old = _old_lms3_paired(a, b)
    ci = paired_bootstrap_ci(a, b)
    assert (ci.estimate, ci.high, ci.n) == (old[0], old[2], old[3])
    assert ci.low == pytest.approx(old[1], rel=1e-12, abs=1e-15)  # lms3's lower tail: as rf_solver's above


def test_paired_bootstrap_with_a_statistic_reproduces_any4():
    a, b = RNG.uniform(20, 40, 33), RNG.uniform(20, 40, 33)
    tokens = 127

    def ratio(x, y):
        return np.exp((x.sum(axis=-1) - y.sum(axis=-1)) / (x.shape[-1] * tokens))

    ci = paired_bootstrap_ci(a, b, ratio, vectorized=True)
    old = _old_any4_ratio(a, b, tokens)
    assert ci.estimate == pytest.approx(old[0], rel=1e-15) and (ci.low, ci.high) == old[1:]
    loop = paired_bootstrap_ci(a, b, lambda x, y: math.exp((x.sum() - y.sum()) / (len(x) * tokens)))
    assert (loop.low, loop.high) == old[1:]


def test_python_scheme_and_rank_cut_reproduce_defame():
    rng = random.Random(7)
    gold = [rng.choice("ABC") for _ in range(45)]
    pa = [g if rng.random() < 0.7 else "A" for g in gold]
    pb = [g if rng.random() < 0.5 else "B" for g in gold]
    ga, a_ok, b_ok = np.array(gold), np.array(pa) == np.array(gold), np.array(pb) == np.array(gold)
    for n_boot in (1000, 2000, 37):
        ci = paired_bootstrap_ci(a_ok.astype(float), b_ok.astype(float), n_boot=n_boot, scheme="python", method="rank")
        assert ci.bounds == pytest.approx(_old_defame_paired_acc(gold, pa, pb, n_boot=n_boot), abs=1e-12)
    assert ga.size == 45


def test_diff_ci_reproduces_llm_eval():
    a, b = RNG.normal(1, 1, 30), RNG.normal(0, 1, 17)
    ci = bootstrap_diff_ci(a, b, seed=4)
    assert (ci.estimate, ci.low, ci.high, ci.n) == _old_llm_eval_diff(a, b, seed=4)


@pytest.mark.parametrize("x", SAMPLES, ids=lambda x: f"n{len(x)}")
def test_mean_sd_and_se_reproduce_llm_eval_m3_jepa_and_continual(x):
    ms = mean_sd(x)
    assert (ms.mean, ms.se, ms.n) == _old_llm_eval_mean_se(x)
    assert ms.format(1, scale=100.0) == _old_m3_fmt(x) and ms.format(3, sd_digits=2, spec="g") == _old_m3_fmt(x, False)
    with_nan = np.concatenate([x, [np.nan]])
    pop = mean_sd(with_nan, ddof=0, nan="omit")
    assert (pop.mean, pop.sd) == _old_continual_mean_std(with_nan)


@pytest.mark.parametrize("n", [1, 2, 5, 13])
def test_t_interval_reproduces_dpcr(n):
    x = list(RNG.normal(2, 0.5, n)) + [math.nan]
    ci = t_interval(x)
    assert (ci.estimate, ci.low, ci.high) == _old_dpcr_t(x) and ci.n == n


def test_wilson_reproduces_rf_solver_and_pae():
    for n in (1, 2, 3, 10, 37, 200):
        for k in range(n + 1):
            assert wilson(k, n, clip=False) == _old_rf_wilson(k, n)
            assert wilson(k, n, empty=(0.0, 1.0)) == _old_pae_wilson(k, n)
            lo, hi = wilson(k, n)
            assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert all(math.isnan(v) for v in wilson(0, 0)) and wilson(0, 0, empty=(0.0, 1.0)) == (0.0, 1.0)
    # a known value: 8 of 10 at 95 %
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)


# --- the definitions -----------------------------------------------------------------------------
def test_mean_sd_is_the_sample_sd_by_default():
    ms = mean_sd([1.0, 2.0, 3.0, 4.0])
    assert ms.mean == 2.5 and ms.sd == pytest.approx(statistics.stdev([1, 2, 3, 4]))
    assert mean_sd([1.0, 2.0, 3.0, 4.0], ddof=0).sd == pytest.approx(statistics.pstdev([1, 2, 3, 4]))
    assert mean_sd([5.0]).sd == 0.0 and mean_sd([5.0]).n == 1
    empty = mean_sd([])
    assert empty.n == 0 and math.isnan(empty.mean) and empty.format() == "n/a"
    assert fmt_mean_sd([12.25, 12.35, 12.45]) == "12.3 ± 0.1"
    assert fmt_mean_sd([0.5, 0.7], 1, scale=100) == "60.0 ± 14.1"
    with pytest.raises(ValueError, match="ddof"):
        mean_sd([1.0], ddof=2)


def test_bootstrap_ci_covers_the_mean_and_narrows_with_n():
    small, big = RNG.normal(1.0, 1.0, 20), RNG.normal(1.0, 1.0, 2000)
    a, b = bootstrap_ci(small), bootstrap_ci(big)
    assert a.low < a.estimate < a.high and b.low < b.estimate < b.high
    assert (b.high - b.low) < (a.high - a.low) / 5
    assert b.low < 1.0 < b.high
    assert bootstrap_ci(small, seed=1) != bootstrap_ci(small, seed=2)
    assert bootstrap_ci(small, seed=1) == bootstrap_ci(small, seed=1)
    assert bootstrap_ci([]).n == 0


def test_paired_bootstrap_uses_one_set_of_indices_for_both_arms():
    base = RNG.normal(0, 5, 200)  # large item effect shared by both arms
    a, b = base + 0.3, base.copy()
    paired = paired_bootstrap_ci(a, b)
    assert paired.low == pytest.approx(0.3) and paired.high == pytest.approx(0.3)  # the item effect cancels
    unpaired = bootstrap_diff_ci(a, b)
    assert unpaired.high - unpaired.low > 0.5  # resampling the arms apart keeps the item effect
    with pytest.raises(ValueError, match="same items"):
        paired_bootstrap_ci([1.0, 2.0], [1.0])


def test_stratified_indices_stay_in_their_strata():
    strata = np.array(["a"] * 3 + ["b"] * 7 + ["a"] * 2)
    for scheme in ("numpy", "python"):
        idx = bootstrap_indices(12, n_boot=50, seed=1, strata=strata, scheme=scheme)
        assert idx.shape == (50, 12)
        for row in idx:
            assert list(strata[row]) == ["a"] * 5 + ["b"] * 7
    # a stratified CI of a two-task mean ignores the between-task spread a plain bootstrap sees
    x = np.concatenate([np.full(10, 0.0), np.full(10, 1.0)]) + RNG.normal(0, 0.01, 20)
    tasks = np.repeat([0, 1], 10)
    strat, plain = bootstrap_ci(x, strata=tasks), bootstrap_ci(x)
    assert strat.high - strat.low < (plain.high - plain.low) / 5
    with pytest.raises(ValueError, match="one label per item"):
        bootstrap_indices(5, strata=[0, 1])


def test_python_scheme_matches_random_randrange():
    idx = bootstrap_indices(6, n_boot=3, seed=9, scheme="python")
    rng = random.Random(9)
    assert idx.tolist() == [[rng.randrange(6) for _ in range(6)] for _ in range(3)]


def test_percentile_interval_methods():
    s = np.arange(1000, dtype=float)
    assert percentile_interval(s, method="rank") == (25.0, 975.0)
    lo, hi = percentile_interval(s)
    assert lo == pytest.approx(np.quantile(s, 0.025)) and hi == pytest.approx(np.quantile(s, 0.975))
    with pytest.raises(ValueError):
        percentile_interval(s, 1.5)
    with pytest.raises(ValueError):
        percentile_interval(s, method="nearest")  # type: ignore[arg-type]


def test_verdict_reads_the_interval_for_the_claimed_direction():
    assert verdict((0.1, 0.4)) == HOLDS
    assert verdict((-0.4, -0.1)) == FAILS
    assert verdict((-0.1, 0.4)) == NOT_RESOLVED
    assert verdict((0.0, 0.4)) == NOT_RESOLVED  # touching the null is not excluding it
    assert verdict((0.8, 0.95), null=1.0, direction="less") == HOLDS
    assert verdict((1.02, 1.1), null=1.0, direction="less") == FAILS
    assert verdict(Interval(0.2, 0.1, 0.3, 10)) == HOLDS and Interval(0.2, 0.1, 0.3, 10).verdict(0.5) == FAILS
    assert verdict((math.nan, math.nan)) == NOT_RESOLVED
    with pytest.raises(ValueError, match="direction"):
        verdict((0.1, 0.2), direction="up")  # type: ignore[arg-type]


def test_interval_and_normal_interval():
    ci = Interval(0.1234, 0.1, 0.15, 10)
    assert ci.format(3) == "0.123 [0.100, 0.150]" and ci.format(1, scale=100, sign=True) == "+12.3 [+10.0, +15.0]"
    assert Interval(math.nan, math.nan, math.nan, 0).format() == "n/a"
    assert ci.excludes_zero() and not ci.excludes(0.12) and ci.overlaps(Interval(0.2, 0.14, 0.3, 5))
    x = RNG.normal(3, 1, 50)
    ni = normal_interval(x)
    half = 1.96 * x.std(ddof=1) / np.sqrt(50)
    assert (ni.low, ni.high) == pytest.approx((x.mean() - half, x.mean() + half))
    assert math.isnan(normal_interval([1.0]).low)
    assert stats.__all__  # the public names


def _old_lsa_agg(v):  # methods/long_short_alignment/report.py (mean ± SE with the statistics module)
    return f"{statistics.mean(v):.3g} ± {statistics.stdev(v) / len(v) ** 0.5:.2g}"


def test_exact_mean_sd_is_the_statistics_module():
    for x in SAMPLES[1:]:
        v = [float(t) for t in x]
        ms = mean_sd(v, exact=True)
        assert (ms.mean, ms.sd) == (statistics.mean(v), statistics.stdev(v))
        assert mean_sd(v, ddof=0, exact=True).sd == statistics.pstdev(v)
        assert f"{ms.mean:.3g} ± {ms.sd / len(v) ** 0.5:.2g}" == _old_lsa_agg(v)
        assert ms.mean == pytest.approx(mean_sd(v).mean, rel=1e-12)  # numpy and exact agree but for the last bits
    assert mean_sd([2.5], exact=True).sd == 0.0 and mean_sd([], exact=True).n == 0


def test_normal_half_width_reproduces_fourier_mamba():
    for x in SAMPLES:
        old = float(1.96 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")  # fourier_mamba
        new = stats.normal_half_width(x)
        assert new == old or (math.isnan(new) and math.isnan(old))
