"""BIC order determination and the classical comparators (SIR, SAVE, DR, pHd)."""

import numpy as np
import pytest

from methods.nonlinear_sdr.basis import LinearBasis
from methods.nonlinear_sdr.classic import classic_matrix, slice_codes
from methods.nonlinear_sdr.machines import eigh_desc
from methods.nonlinear_sdr.order import bic_criterion, bic_order
from methods.nonlinear_sdr.simulate import MODELS, generate, subspace_distance


def test_bic_keeps_directions_above_the_penalty():
    n = 400  # penalty per direction = λ̂₁ log(n)/√n ≈ 0.30 λ̂₁
    assert bic_order([1.0, 0.6, 0.05, 0.01], n) == 2
    assert bic_order([1.0, 0.1, 0.05], n) == 1
    assert bic_order([1.0, 0.9, 0.8, 0.7], n, k_max=2) == 2
    g = bic_criterion([1.0, 0.6, 0.05], n)
    assert g[1] > g[0] > g[2] - 1


def test_slice_codes_equal_sizes():
    codes = slice_codes(np.random.default_rng(0).standard_normal(100), "continuous", 10)
    assert np.bincount(codes).tolist() == [10] * 10


@pytest.mark.parametrize(
    ("name", "model", "good"),
    [("sir", "M1", True), ("sir", "M4", False), ("save", "M4", True), ("dr", "M4", True), ("phd", "M4", True)],
)
def test_classic_estimators(name, model, good):
    """SIR finds M1's subspace and fails on the symmetric M4; the second-moment methods find M4's."""
    dists = []
    for seed in range(3):
        x, y = generate(MODELS[model], 600, 10, np.random.default_rng(seed))
        basis = LinearBasis().fit(x)
        _, vecs = eigh_desc(classic_matrix(name, basis.transform(x), y, "continuous"))
        dists.append(subspace_distance(basis.to_x_space(vecs[:, :2]), MODELS[model].basis(10)))
    dist = float(np.mean(dists))
    assert (dist < 0.6) if good else (dist > 1.2), dist  # chance: 1.79


def test_ladle_picks_m1s_two_directions_where_bic_picks_one():
    """At λ = 1 PSVM's second eigenvalue is small: BIC keeps one direction, the ladle (bootstrap stability) two."""
    from methods.nonlinear_sdr import PrincipalMachineSDR

    x, y = generate(MODELS["M1"], 400, 6, np.random.default_rng(0))
    est = PrincipalMachineSDR(order="ladle", n_boot=8).fit(x, y)
    assert est.bic_order_ == 1 and est.ladle_order_ == 2 and est.n_components_ == 2
    assert est.ladle_criterion_.shape == (6,) and np.argmin(est.ladle_criterion_) == 2
    with pytest.raises(ValueError, match="ladle"):
        PrincipalMachineSDR(method="kernel", order="ladle").fit(x, y)


def test_ladle_order_on_synthetic_bootstraps():
    from methods.nonlinear_sdr.order import ladle_k_max, ladle_order

    rng = np.random.default_rng(0)
    base = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    # the first two directions are stable across bootstraps, the rest are noise
    boots = [np.column_stack([base[:, :2], np.linalg.qr(rng.standard_normal((5, 3)))[0]]) for _ in range(10)]
    d, g = ladle_order(np.array([1.0, 0.8, 0.01, 0.01, 0.0]), base, boots, ladle_k_max(5))
    assert d == 2 and g.shape == (5,)
    assert ladle_k_max(30) == int(30 / np.log(30))


def test_bic_is_the_specs_formula_and_scale_free():
    """Spec §3.4: G_n(k) = Σ_{i≤k} λ̂_i − c·λ̂₁·k·log(n)/√n, d̂ = argmax over 1 ≤ k ≤ k_max (no other term)."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        lam = np.sort(rng.exponential(size=8))[::-1]
        n, c = int(rng.integers(50, 5000)), float(rng.choice([0.01, 0.1, 1.0, 2.0]))
        k = np.arange(1, 9)
        spec = np.cumsum(lam) - c * lam[0] * k * np.log(n) / np.sqrt(n)
        assert np.allclose(bic_criterion(lam, n, c), spec)
        assert bic_order(lam, n, c) == int(np.argmax(spec)) + 1
        assert bic_order(lam * 37.0, n, c) == bic_order(lam / lam[0], n, c)  # only the ratios λ̂_k/λ̂₁ matter
