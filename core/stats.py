"""Report statistics, written once: mean ± sd, bootstrap and paired bootstrap CIs, Wilson and t intervals.

Every results report states its numbers the same way (STYLE.md, "Results that decide"): a mean with its
spread over seeds, and an interval for each claim, read by :func:`verdict` as *holds* (the interval excludes
the null on the claimed side), *fails* (it excludes the null on the other side: the claim is contradicted)
or *not resolved* (it straddles the null: "an interval that straddles zero is not a result", rliable).

The resampling is explicit and seeded, so a report's numbers can be recomputed from its raw per-item values:

* :func:`bootstrap_indices` draws the ``(n_boot, n)`` resample indices: ``numpy`` scheme
  (``np.random.default_rng(seed).integers(0, n, (n_boot, n))``, the default) or ``python`` scheme
  (``random.Random(seed).randrange(n)`` item by item, resample by resample); with ``strata`` each resample
  draws within every stratum separately (rliable's stratified bootstrap: each task keeps its size).
* :func:`percentile_interval` cuts the bootstrap distribution: ``linear`` (``np.quantile``, the default) or
  ``rank`` (the sorted samples at ``int(q · n_boot)``).
* :func:`bootstrap_ci` (one sample), :func:`paired_bootstrap_ci` (two arms measured on the same items: one
  set of indices for both) and :func:`bootstrap_diff_ci` (two independent samples, each resampled on its own).

Sample sd (``ddof=1``) is the default everywhere; ``ddof=0`` gives the population sd some reports use.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

HOLDS = "holds"
FAILS = "fails"
NOT_RESOLVED = "not resolved"

Verdict = Literal["holds", "fails", "not resolved"]
Scheme = Literal["numpy", "python"]
QuantileMethod = Literal["linear", "rank"]


# --- mean ± sd -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeanSD:
    """A mean, its standard deviation over ``n`` values (ddof as asked) and the standard error ``sd/√n``."""

    mean: float
    sd: float
    n: int

    @property
    def se(self) -> float:
        """Standard error of the mean: ``sd / √n`` (0 when ``sd`` is 0, NaN without values)."""
        if self.n == 0:
            return math.nan
        return float(self.sd / np.sqrt(self.n))

    def format(self, digits: int = 1, *, scale: float = 1.0, sd_digits: int | None = None, spec: str = "f") -> str:
        """``"12.3 ± 0.4"``: the mean and the sd times ``scale`` (100 for percentages).

        ``digits`` and ``spec`` build the format (``f`` fixed, ``g`` significant); ``sd_digits`` defaults to
        ``digits``. Without values: ``"n/a"``.
        """
        return fmt_pm(self.mean * scale, self.sd * scale, digits, sd_digits=sd_digits, spec=spec, empty=self.n == 0)

    def __str__(self) -> str:
        return self.format()


def _array(values: Sequence[float] | np.ndarray, nan: Literal["keep", "omit"]) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    if nan == "omit":
        a = a[~np.isnan(a)]
    return a


def mean_sd(
    values: Sequence[float] | np.ndarray,
    *,
    ddof: int = 1,
    nan: Literal["keep", "omit"] = "keep",
    exact: bool = False,
) -> MeanSD:
    """Mean and standard deviation of ``values`` (numpy: ``a.mean()``, ``a.std(ddof=ddof)``).

    ``ddof=1`` (the default) is the sample sd; one value then has sd 0. ``ddof=0`` is the population sd.
    ``nan="omit"`` drops NaN first. Without values both are NaN and ``n`` is 0. ``exact=True`` computes with
    the :mod:`statistics` module (exact rational arithmetic, correctly rounded) instead of numpy's float sums;
    the two differ in the last bits at most.
    """
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population) or 1 (sample), got {ddof}")
    a = _array(values, nan)
    if a.size == 0:
        return MeanSD(math.nan, math.nan, 0)
    if exact:
        v = [float(x) for x in a]
        spread = statistics.stdev if ddof == 1 else statistics.pstdev
        return MeanSD(statistics.mean(v), spread(v) if len(v) > ddof else 0.0, len(v))
    sd = float(a.std(ddof=ddof)) if a.size > ddof else 0.0
    return MeanSD(float(a.mean()), sd, int(a.size))


def fmt_pm(
    mean: float,
    sd: float,
    digits: int = 1,
    *,
    sd_digits: int | None = None,
    spec: str = "f",
    empty: bool = False,
    na: str = "n/a",
) -> str:
    """``f"{mean:.{digits}{spec}} ± {sd:.{sd_digits}{spec}}"``; ``na`` when ``empty``."""
    if empty:
        return na
    sd_digits = digits if sd_digits is None else sd_digits
    return f"{mean:.{digits}{spec}} ± {sd:.{sd_digits}{spec}}"


def fmt_mean_sd(
    values: Sequence[float] | np.ndarray,
    digits: int = 1,
    *,
    scale: float = 1.0,
    ddof: int = 1,
    sd_digits: int | None = None,
    spec: str = "f",
) -> str:
    """:func:`mean_sd` of ``values`` formatted as ``"12.3 ± 0.4"`` (``"n/a"`` without values)."""
    return mean_sd(values, ddof=ddof).format(digits, scale=scale, sd_digits=sd_digits, spec=spec)


# --- intervals -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided interval at ``level`` over ``n`` items (NaN and 0 when empty)."""

    estimate: float
    low: float
    high: float
    n: int
    level: float = 0.95

    @property
    def bounds(self) -> tuple[float, float]:
        return self.low, self.high

    def excludes(self, null: float = 0.0) -> bool:
        """Whether the interval lies strictly on one side of ``null``."""
        return self.low > null or self.high < null

    def excludes_zero(self) -> bool:
        return self.excludes(0.0)

    def overlaps(self, other: Interval) -> bool:
        return self.low <= other.high and other.low <= self.high

    def verdict(self, null: float = 0.0, direction: Literal["greater", "less"] = "greater") -> Verdict:
        """:func:`verdict` of this interval."""
        return verdict(self, null, direction)

    def format(self, digits: int = 3, *, scale: float = 1.0, spec: str = "f", sign: bool = False) -> str:
        """``"0.123 [0.100, 0.150]"`` (``"n/a"`` when empty); ``sign`` writes ``+`` on positive numbers."""
        if self.n == 0 or math.isnan(self.estimate):
            return "n/a"
        f = f"{{:{'+' if sign else ''}.{digits}{spec}}}"
        return f"{f.format(self.estimate * scale)} [{f.format(self.low * scale)}, {f.format(self.high * scale)}]"


def _empty(level: float) -> Interval:
    return Interval(math.nan, math.nan, math.nan, 0, level)


def verdict(
    ci: Interval | tuple[float, float] | Sequence[float],
    null: float = 0.0,
    direction: Literal["greater", "less"] = "greater",
) -> Verdict:
    """Read an interval for a claim "the value is ``direction`` than ``null``".

    ``"holds"`` when the whole interval is on the claimed side of ``null``; ``"fails"`` when it is wholly on
    the other side (the claim is contradicted); ``"not resolved"`` when it touches or straddles ``null`` (or
    is NaN). ``ci`` is an :class:`Interval` or ``(low, high)``.
    """
    if direction not in ("greater", "less"):
        raise ValueError(f"direction must be 'greater' or 'less', got {direction!r}")
    lo, hi = ci.bounds if isinstance(ci, Interval) else (float(ci[0]), float(ci[1]))
    above, below = lo > null, hi < null
    if direction == "less":
        above, below = below, above
    if above:
        return HOLDS
    if below:
        return FAILS
    return NOT_RESOLVED


def wilson(
    successes: float,
    n: int,
    z: float = 1.96,
    *,
    clip: bool = True,
    empty: tuple[float, float] = (math.nan, math.nan),
) -> tuple[float, float]:
    """Wilson score interval of the proportion ``successes / n`` (``empty`` when ``n`` is 0).

    ``clip`` keeps the bounds in [0, 1] (rounding can otherwise put a bound a few ulps outside).
    """
    if n == 0:
        return empty
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo, hi = centre - half, centre + half
    if clip:
        lo, hi = max(0.0, lo), min(1.0, hi)
    return float(lo), float(hi)


def t_interval(
    values: Sequence[float] | np.ndarray, level: float = 0.95, *, nan: Literal["keep", "omit"] = "omit"
) -> Interval:
    """Mean with a Student-t interval (sample sd, ``n − 1`` degrees of freedom); one value: a point interval."""
    from scipy import stats

    v = _array(values, nan)
    if v.size == 0:
        return _empty(level)
    m = float(v.mean())
    if v.size == 1:
        return Interval(m, m, m, 1, level)
    half = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return Interval(m, m - half, m + half, int(v.size), level)


def normal_half_width(values: Sequence[float] | np.ndarray, z: float = 1.96) -> float:
    """``z`` standard errors of the mean (``z · sd / √n``, sample sd): the half-width of a normal interval;
    NaN for fewer than two values."""
    v = _array(values, "keep")
    if v.size < 2:
        return math.nan
    return float(z * v.std(ddof=1) / np.sqrt(v.size))


def normal_interval(values: Sequence[float] | np.ndarray, z: float = 1.96) -> Interval:
    """Mean ± ``z`` standard errors (sample sd, :func:`normal_half_width`); NaN bounds for fewer than two values."""
    v = _array(values, "keep")
    if v.size == 0:
        return _empty(0.95)
    m, half = float(v.mean()), normal_half_width(v, z)
    return Interval(m, m - half, m + half, int(v.size))


# --- bootstrap -----------------------------------------------------------------------------------
def bootstrap_indices(
    n: int,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    strata: Sequence[Any] | np.ndarray | None = None,
    scheme: Scheme = "numpy",
) -> np.ndarray:
    """``(n_boot, n)`` indices into ``n`` items, each row one resample with replacement.

    ``scheme="numpy"``: one ``np.random.default_rng(seed).integers(0, n, (n_boot, n))`` draw.
    ``scheme="python"``: ``random.Random(seed)``, ``randrange(n)`` for each item of each resample in turn.
    ``strata`` (one label per item): every resample draws, stratum by stratum (sorted labels), as many items
    of that stratum as it has, from that stratum only; each row lists the items in their original order of
    strata (the statistic must not depend on the order within a row).
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if scheme not in ("numpy", "python"):
        raise ValueError(f"scheme must be 'numpy' or 'python', got {scheme!r}")
    if strata is None:
        if scheme == "numpy":
            return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        rng = random.Random(seed)
        return np.array([[rng.randrange(n) for _ in range(n)] for _ in range(n_boot)], dtype=np.int64).reshape(
            n_boot, n
        )
    labels = np.asarray(strata)
    if labels.shape != (n,):
        raise ValueError(f"strata must give one label per item ({n}), got shape {labels.shape}")
    groups = [np.flatnonzero(labels == s) for s in np.unique(labels)]
    if scheme == "numpy":
        rng_np = np.random.default_rng(seed)
        parts = [g[rng_np.integers(0, g.size, size=(n_boot, g.size))] for g in groups]
        return np.concatenate(parts, axis=1)
    rng = random.Random(seed)
    rows = [[int(g[rng.randrange(g.size)]) for g in groups for _ in range(g.size)] for _ in range(n_boot)]
    return np.array(rows, dtype=np.int64).reshape(n_boot, n)


def _tails(level: float) -> tuple[float, float]:
    """The two tail quantiles of a ``level`` interval, rounded so that 0.95 gives exactly 0.025 and 0.975."""
    return round((1.0 - level) / 2.0, 12), round((1.0 + level) / 2.0, 12)


def percentile_interval(
    samples: Sequence[float] | np.ndarray, level: float = 0.95, *, method: QuantileMethod = "linear"
) -> tuple[float, float]:
    """The ``(1 ± level) / 2`` percentiles of a bootstrap distribution.

    ``linear``: ``np.quantile`` (linear interpolation). ``rank``: the sorted samples at ``int(q · B)`` (the
    upper one at most ``B − 1``).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    q_lo, q_hi = _tails(level)
    if method == "linear":
        lo, hi = np.quantile(np.asarray(samples, dtype=float), [q_lo, q_hi])
        return float(lo), float(hi)
    if method == "rank":
        s = sorted(float(x) for x in samples)
        b = len(s)
        return s[int(q_lo * b)], s[min(b - 1, int(q_hi * b))]
    raise ValueError(f"method must be 'linear' or 'rank', got {method!r}")


def _boot_stat(
    x: np.ndarray, idx: np.ndarray, stat: Callable[..., float] | None, vectorized: bool, *others: np.ndarray
) -> np.ndarray:
    arrays = (x, *others)
    if stat is None:
        if others:
            raise TypeError("a statistic of several arrays must be given")
        return x[idx].mean(axis=1)
    if vectorized:
        return np.asarray(stat(*(a[idx] for a in arrays)), dtype=float)
    return np.array([stat(*(a[i] for a in arrays)) for i in idx], dtype=float)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    stat: Callable[[np.ndarray], float] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    strata: Sequence[Any] | np.ndarray | None = None,
    scheme: Scheme = "numpy",
    method: QuantileMethod = "linear",
    vectorized: bool = False,
) -> Interval:
    """Percentile bootstrap interval of ``stat`` (default: the mean) over resampled ``values``.

    ``stat`` takes one resample (a 1-D array) and returns a float; with ``vectorized=True`` it takes all
    resamples at once (``(n_boot, n)``) and returns ``n_boot`` values. The estimate is ``stat(values)``.
    Resampling as :func:`bootstrap_indices`, cutting as :func:`percentile_interval`.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return _empty(level)
    idx = bootstrap_indices(x.size, n_boot=n_boot, seed=seed, strata=strata, scheme=scheme)
    boots = _boot_stat(x, idx, stat, vectorized)
    lo, hi = percentile_interval(boots, level, method=method)
    if stat is None:
        est = float(x.mean())
    elif vectorized:
        est = float(np.asarray(stat(x[None, :]), dtype=float)[0])
    else:
        est = float(stat(x))
    return Interval(est, lo, hi, int(x.size), level)


def paired_bootstrap_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    stat: Callable[[np.ndarray, np.ndarray], float] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    strata: Sequence[Any] | np.ndarray | None = None,
    scheme: Scheme = "numpy",
    method: QuantileMethod = "linear",
    vectorized: bool = False,
) -> Interval:
    """Paired bootstrap interval of a difference between two arms measured on the same items.

    Each resample draws one set of item indices and uses it for both arms. The default statistic is the
    mean of ``a − b``; ``stat(a_resample, b_resample)`` gives another (e.g. a ratio of perplexities), with
    ``vectorized`` as in :func:`bootstrap_ci`. The estimate is the statistic on the full arms.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired arms need the same items: got shapes {x.shape} and {y.shape}")
    if x.size == 0:
        return _empty(level)
    if stat is None:
        return bootstrap_ci(x - y, n_boot=n_boot, seed=seed, level=level, strata=strata, scheme=scheme, method=method)
    idx = bootstrap_indices(x.size, n_boot=n_boot, seed=seed, strata=strata, scheme=scheme)
    boots = _boot_stat(x, idx, stat, vectorized, y)
    lo, hi = percentile_interval(boots, level, method=method)
    if vectorized:
        est = float(np.asarray(stat(x[None, :], y[None, :]), dtype=float)[0])
    else:
        est = float(stat(x, y))
    return Interval(est, lo, hi, int(x.size), level)


def bootstrap_diff_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    method: QuantileMethod = "linear",
) -> Interval:
    """Interval of ``mean(a) − mean(b)`` for two independent samples, each resampled on its own.

    One ``np.random.default_rng(seed)`` draws ``a``'s resamples, then ``b``'s; ``n`` is both sizes together.
    Use :func:`paired_bootstrap_ci` when both arms are measured on the same items.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return _empty(level)
    rng = np.random.default_rng(seed)
    bx = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    by = y[rng.integers(0, y.size, size=(n_boot, y.size))].mean(axis=1)
    lo, hi = percentile_interval(bx - by, level, method=method)
    return Interval(float(x.mean() - y.mean()), lo, hi, int(x.size + y.size), level)


__all__ = [
    "FAILS",
    "HOLDS",
    "NOT_RESOLVED",
    "Interval",
    "MeanSD",
    "Verdict",
    "bootstrap_ci",
    "bootstrap_diff_ci",
    "bootstrap_indices",
    "fmt_mean_sd",
    "fmt_pm",
    "mean_sd",
    "normal_half_width",
    "normal_interval",
    "paired_bootstrap_ci",
    "percentile_interval",
    "t_interval",
    "verdict",
    "wilson",
]
