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
