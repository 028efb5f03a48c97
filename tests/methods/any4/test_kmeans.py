"""Batched weighted 1-D Lloyd against scikit-learn and the exact DP optimum (spec §7)."""

import numpy as np
import pytest
import torch

from methods.any4.kmeans import SortedRows, kmeans_1d_optimal, kmeans_plusplus, random_init, weighted_lloyd


@pytest.fixture(autouse=True)
def _one_thread():
    """Like AnyQuantizer, run the many small k-means ops on one thread (see quantizers.py)."""
    prev = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(prev)


def _rows(r: int, k: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(r, k, generator=g, dtype=torch.float64) * 3
    w = torch.rand(r, k, generator=g, dtype=torch.float64)
    return x, w


def test_assignment_is_nearest_centroid_and_codes_in_original_order():
    x, w = _rows(7, 50, 0)
    rows = SortedRows(x, w)
    res = weighted_lloyd(rows, kmeans_plusplus(rows, 16, torch.Generator().manual_seed(0)))
    brute = (x[:, :, None] - res.centroids[:, None, :]).abs().argmin(dim=2)
    dist_ours = (x - res.centroids.gather(1, res.codes)).abs()
    dist_brute = (x - res.centroids.gather(1, brute)).abs()
    torch.testing.assert_close(dist_ours, dist_brute)
    assert (res.centroids.diff(dim=1) >= 0).all()


def test_objective_never_increases():
    x, w = _rows(64, 96, 1)
    rows = SortedRows(x, w)
    res = weighted_lloyd(
        rows, random_init(rows, 16, torch.Generator().manual_seed(1)), max_iter=300, tol=0.0, track=True
    )
    hist = torch.stack(res.history)
    assert len(res.history) > 3
    assert ((hist[1:] - hist[:-1]) <= 1e-12 * hist[:-1].abs()).all()
    assert torch.allclose(res.objective, hist[-1])


def test_close_to_sklearn_and_not_below_dp_optimum():
    """200 random weighted rows: within 1% of sklearn (k-means++, n_init=1) on average; ≥ the DP optimum
    (checked on the first 50 rows, the DP being O(k·K²))."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    x, w = _rows(200, 256, 2)
    rows = SortedRows(x, w)
    ours = weighted_lloyd(
        rows, kmeans_plusplus(rows, 16, torch.Generator().manual_seed(2)), max_iter=300, tol=1e-6
    ).objective.numpy()
    with threadpool_limits(1):  # 200 tiny fits: thread wake-ups would dominate
        sk = np.array(
            [
                KMeans(16, init="k-means++", n_init=1, random_state=i)
                .fit(x[i, :, None].numpy(), sample_weight=w[i].numpy())
                .inertia_
                for i in range(200)
            ]
        )
    dp = np.array([kmeans_1d_optimal(x[i].numpy(), w[i].numpy(), 16)[0] for i in range(50)])
    assert (ours[:50] >= dp * (1 - 1e-9)).all()
    assert (sk[:50] >= dp * (1 - 1e-9)).all()
    ratio = float(np.mean(ours / sk))
    assert ratio <= 1.01, ratio


def test_dp_solver_is_exact_on_small_cases():
    """Brute force over every split of 6 sorted points into ≤ 3 contiguous clusters."""
    import itertools

    rng = np.random.default_rng(3)
    for _ in range(5):
        x = np.sort(rng.normal(size=6))
        w = rng.random(6)
        best = np.inf
        for a, b in itertools.combinations(range(1, 6), 2):
            cost = 0.0
            for part in (slice(0, a), slice(a, b), slice(b, 6)):
                xm = np.average(x[part], weights=w[part])
                cost += float((w[part] * (x[part] - xm) ** 2).sum())
            best = min(best, cost)
        obj, cents = kmeans_1d_optimal(x, w, 3)
        assert obj == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert len(cents) == 3


def test_rows_with_few_distinct_values_are_exact():
    x = torch.tensor([[1.0, 2.0, 2.0, 5.0, 1.0, 5.0, 9.0, 9.0]] * 3, dtype=torch.float64)
    rows = SortedRows(x, torch.ones_like(x))
    res = weighted_lloyd(rows, kmeans_plusplus(rows, 4, torch.Generator().manual_seed(0)))
    assert torch.all(res.objective == 0)
    assert torch.equal(res.centroids.gather(1, res.codes), x)


def test_zero_weight_rows_and_points_are_safe():
    x, _ = _rows(4, 40, 4)
    w = torch.zeros_like(x)
    w[1, ::2] = 1.0  # row 1: half the points carry weight
    rows = SortedRows(x, w)
    res = weighted_lloyd(rows, kmeans_plusplus(rows, 8, torch.Generator().manual_seed(0)))
    assert torch.isfinite(res.centroids).all()
    assert res.objective[0] == 0 and res.objective[1] >= 0
