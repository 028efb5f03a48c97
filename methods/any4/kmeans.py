"""Batched weighted 1-D k-means for the per-row LUTs (spec §3.2, §6.2).

Every row of a weight matrix is its own 1-D clustering problem: points
``u_i1 … u_iK`` with sample weights ``ω_ik`` and ``k = 2^b`` centroids, minimizing

    J_i = Σ_k ω_ik · (u_ik − c_{i, a_ik})²                       (§3.2)

All rows are solved at once. In 1-D the nearest-centroid cells of sorted
centroids are intervals between the midpoints of neighbours, so after sorting each
row's points once (:class:`SortedRows`), one Lloyd iteration is

- assignment: the cell boundaries are a ``searchsorted`` of the k−1 midpoints in the
  sorted points (exactly the argmin over the k centroids; a point on a midpoint
  goes to the lower centroid);
- update: each cluster's Σω, Σωu, Σωu² are differences of prefix sums, so the new
  centroid is the weighted mean Σωu/Σω; an empty (or zero-weight) cluster keeps its
  value.

That costs O(k log K) per row instead of O(K·k). A row stops when its largest
centroid shift is ≤ ``tol``; the others go on, exactly as if each row ran alone.
Seeding is weighted greedy k-means++ (the variant scikit-learn uses).

:func:`kmeans_1d_optimal` is the exact dynamic-programming solver used by the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch


class SortedRows:
    """Each row's points sorted once, with float64 prefix sums of ω, ωu and ωu²."""

    def __init__(self, x: torch.Tensor, w: torch.Tensor) -> None:
        self.xs, self.perm = x.sort(dim=1)
        self.ws = w.gather(1, self.perm)
        r, k = x.shape
        self.p0 = torch.zeros(r, k + 1, dtype=torch.float64, device=x.device)
        self.p1 = torch.zeros_like(self.p0)
        torch.cumsum(self.ws, dim=1, dtype=torch.float64, out=self.p0[:, 1:])
        torch.cumsum(self.ws * self.xs, dim=1, dtype=torch.float64, out=self.p1[:, 1:])
        self._p2: torch.Tensor | None = None

    @property
    def p2(self) -> torch.Tensor:
        """Prefix sums of ωu² (built on first use: only seeding and objectives need them)."""
        if self._p2 is None:
            self._p2 = torch.zeros_like(self.p0)
            torch.cumsum(self.ws * self.xs * self.xs, dim=1, dtype=torch.float64, out=self._p2[:, 1:])
        return self._p2

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.xs.shape)  # type: ignore[return-value]

    def subset(self, idx: torch.Tensor) -> SortedRows:
        """The rows ``idx`` (shares nothing; used to drop converged rows)."""
        sub = SortedRows.__new__(SortedRows)
        for name in ("xs", "perm", "ws", "p0", "p1"):
            setattr(sub, name, getattr(self, name)[idx])
        sub._p2 = None if self._p2 is None else self._p2[idx]
        return sub

    def bounds(self, centroids_sorted: torch.Tensor) -> torch.Tensor:
        """(R, k+1) start index of each cluster in sorted order, plus K."""
        mids = ((centroids_sorted[:, 1:] + centroids_sorted[:, :-1]) / 2).to(self.xs.dtype).contiguous()
        inner = torch.searchsorted(self.xs, mids, right=True)
        r = self.xs.shape[0]
        z = torch.zeros(r, 1, dtype=inner.dtype, device=inner.device)
        return torch.cat([z, inner, torch.full_like(z, self.xs.shape[1])], dim=1)

    def range_sums(self, lo: torch.Tensor, hi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Σω, Σωu, Σωu² over sorted positions [lo, hi) per row (float64)."""
        return (
            self.p0.gather(1, hi) - self.p0.gather(1, lo),
            self.p1.gather(1, hi) - self.p1.gather(1, lo),
            self.p2.gather(1, hi) - self.p2.gather(1, lo),
        )

    def cluster_sums(self, bounds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.range_sums(bounds[:, :-1], bounds[:, 1:])

    def objective(self, centroids_sorted: torch.Tensor, bounds: torch.Tensor | None = None) -> torch.Tensor:
        """J_i with each point assigned to its nearest centroid (float64)."""
        b = self.bounds(centroids_sorted) if bounds is None else bounds
        s0, s1, s2 = self.cluster_sums(b)
        c = centroids_sorted.double()
        return (s2 - 2 * c * s1 + c * c * s0).sum(dim=1).clamp_min(0.0)

    def codes(self, bounds: torch.Tensor) -> torch.Tensor:
        """(R, K) cluster index of every point, in the original column order."""
        r, k = self.xs.shape
        marks = torch.zeros(r, k + 1, dtype=torch.int64, device=self.xs.device)
        marks.scatter_add_(1, bounds[:, 1:-1], torch.ones_like(bounds[:, 1:-1]))
        sorted_codes = marks.cumsum(1)[:, :k]
        return torch.empty_like(sorted_codes).scatter_(1, self.perm, sorted_codes)


@dataclass
class LloydResult:
    """Output of :func:`weighted_lloyd`.

    Attributes:
        centroids: (R, k), ascending per row.
        codes: (R, K) int64 index of each point's centroid.
        objective: (R,) final weighted squared error J_i (float64).
        n_iter: (R,) Lloyd iterations run by each row.
        history: every row's objective after each assignment step (when tracked).
    """

    centroids: torch.Tensor
    codes: torch.Tensor
    objective: torch.Tensor
    n_iter: torch.Tensor
    history: list[torch.Tensor] = field(default_factory=list)


def _draw(cum: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """``n`` sorted-order indices per row drawn ∝ the increments of ``cum`` (R, K); uniform if no mass."""
    r, k = cum.shape
    total = cum[:, -1:]
    u = torch.rand(r, n, generator=generator, dtype=torch.float64, device=cum.device)
    idx = torch.searchsorted(cum.contiguous(), (u * total).to(cum.dtype).contiguous(), right=True).clamp_max(k - 1)
    uniform = (u * k).long().clamp_max(k - 1)
    return torch.where(total > 0, idx, uniform)


def kmeans_plusplus(
    rows: SortedRows, k: int, generator: torch.Generator, n_local_trials: int | None = None
) -> torch.Tensor:
    """Weighted greedy k-means++ seeding of every row → (R, k) centroids (ascending).

    The first centroid is drawn ∝ ω; each next one ∝ ω·D² (D the distance to the
    nearest chosen centroid), keeping the best of ``2 + ln k`` candidates. A
    candidate's gain is computed in O(log K) from prefix sums: it only changes D²
    inside its own new cell, between the midpoints to its chosen neighbours.
    """
    xs, ws = rows.xs, rows.ws
    r = xs.shape[0]
    trials = n_local_trials or 2 + int(math.log(k))
    ridx = torch.arange(r, device=xs.device)
    first = _draw(rows.p0[:, 1:], 1, generator)[:, 0]
    centers = xs[ridx, first][:, None]
    d2 = (xs - centers) ** 2
    inf = torch.full((r, 1), float("inf"), dtype=xs.dtype, device=xs.device)

    def prefix(cum: torch.Tensor, i: torch.Tensor) -> torch.Tensor:  # Σ of the first i terms
        return torch.where(i > 0, cum.gather(1, (i - 1).clamp_min(0)), torch.zeros((), dtype=cum.dtype))

    for _ in range(1, k):
        cum = (ws * d2).cumsum(1)  # float32 is plenty for seeding
        cand = xs.gather(1, _draw(cum, trials, generator))  # (R, T)
        pos = torch.searchsorted(centers.contiguous(), cand.contiguous())
        padded = torch.cat([-inf, centers, inf], dim=1)
        left, right = padded.gather(1, pos), padded.gather(1, pos + 1)
        lo = torch.searchsorted(xs, ((cand + left) / 2).contiguous(), right=True)
        hi = torch.searchsorted(xs, ((cand + right) / 2).contiguous(), right=True)
        s0, s1, s2 = rows.range_sums(lo, hi)
        c = cand.double()
        gain = (prefix(cum, hi) - prefix(cum, lo)).double() - (s2 - 2 * c * s1 + c * c * s0)
        best = cand[ridx, gain.argmax(dim=1)][:, None]
        d2 = torch.minimum(d2, (xs - best).square_(), out=d2)
        centers = torch.cat([centers, best], dim=1).sort(dim=1).values
    return centers


def random_init(rows: SortedRows, k: int, generator: torch.Generator) -> torch.Tensor:
    """k distinct points of each row chosen uniformly (scikit-learn's ``init="random"``)."""
    order = torch.rand(rows.shape, generator=generator).argsort(dim=1)[:, :k]
    return rows.xs.gather(1, order.to(rows.xs.device))


def weighted_lloyd(
    rows: SortedRows, init: torch.Tensor, *, max_iter: int = 100, tol: float = 1.5e-3, track: bool = False
) -> LloydResult:
    """Batched weighted Lloyd iterations from ``init`` (R, k), see the module docstring.

    Args:
        rows: the sorted points and weights.
        init: (R, k) initial centroids (any order).
        max_iter: iteration cap per row.
        tol: a row stops once its largest centroid shift is ≤ tol.
        track: record every row's objective after each assignment (for tests).
    """
    c_all = init.to(rows.xs.dtype).sort(dim=1).values
    r = c_all.shape[0]
    n_iter = torch.zeros(r, dtype=torch.int64, device=c_all.device)
    history = [rows.objective(c_all)] if track else []
    work, idx, c = rows, torch.arange(r, device=c_all.device), c_all.clone()
    active = torch.ones(r, dtype=torch.bool, device=c_all.device)
    bounds = work.bounds(c)
    for _ in range(max_iter):
        if not bool(active.any()):
            break
        if not track and 2 * int(active.sum()) < active.numel():  # drop converged rows now and then
            c_all[idx] = c
            keep = active.nonzero()[:, 0]
            work, idx, c, active, bounds = work.subset(keep), idx[keep], c[keep], active[keep], bounds[keep]
        s0, s1, _ = work.cluster_sums(bounds)
        new_c = torch.where(s0 > 0, s1 / s0.clamp_min(1e-300), c.double()).to(c.dtype)
        shift = (new_c - c).abs().amax(dim=1)
        c = torch.where(active[:, None], new_c, c).sort(dim=1).values
        n_iter[idx] += active.long()
        bounds = work.bounds(c)
        if track:
            history.append(work.objective(c, bounds))
        active &= shift > tol
    c_all[idx] = c
    bounds = rows.bounds(c_all)
    return LloydResult(
        centroids=c_all,
        codes=rows.codes(bounds),
        objective=rows.objective(c_all, bounds),
        n_iter=n_iter,
        history=history,
    )


def kmeans_1d_optimal(x: np.ndarray, w: np.ndarray | None, k: int) -> tuple[float, np.ndarray]:
    """Exact weighted 1-D k-means (at most k clusters) by dynamic programming on the sorted points.

    Contiguous runs of the sorted points are the only optimal clusters, so with
    prefix sums of ω, ωx, ωx² the cost of a run is O(1) and
    ``D[c][j] = min_i D[c−1][i] + cost(i, j)`` gives the optimum in O(k·n²).
    Returns ``(objective, centroids)``.
    """
    x = np.asarray(x, dtype=np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    xs, ws = x[order], w[order]
    n = xs.size
    s0 = np.concatenate([[0.0], np.cumsum(ws)])
    s1 = np.concatenate([[0.0], np.cumsum(ws * xs)])
    s2 = np.concatenate([[0.0], np.cumsum(ws * xs * xs)])
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    m0, m1, m2 = s0[j] - s0[i], s1[j] - s1[i], s2[j] - s2[i]
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = np.where(m0 > 0, m2 - m1 * m1 / m0, 0.0)
    cost = np.maximum(cost, 0.0)
    cost[i > j] = np.inf
    d = np.full(n + 1, np.inf)
    d[0] = 0.0
    back = []
    for _ in range(k):
        cand = d[:, None] + cost  # cand[i, j]: earlier clusters cover [0, i), this one [i, j)
        arg = cand.argmin(axis=0)
        d = cand[arg, np.arange(n + 1)]
        back.append(arg)
    cents, jj = [], n
    for arg in reversed(back):
        ii = arg[jj]
        if jj > ii and s0[jj] - s0[ii] > 0:
            cents.append((s1[jj] - s1[ii]) / (s0[jj] - s0[ii]))
        jj = ii
    return float(d[n]), np.array(sorted(cents))
