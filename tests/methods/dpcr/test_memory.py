"""Per-class memory (spec §3.2): projector properties, prototype identity, float64."""

import numpy as np
import pytest

from methods.dpcr.memory import ClassMemory, ClassStats, row_space_projector


@pytest.mark.parametrize("n, d", [(10, 16), (40, 16)])
def test_projector_is_the_symmetric_idempotent_row_space_projector(n, d):
    rng = np.random.RandomState(n)
    phi = rng.rand(n, d).astype(np.float32).astype(np.float64)  # float32 features, float64 statistics
    st = ClassStats.from_features(phi)
    P = st.projector
    assert st.gram.dtype == np.float64 and st.mean.dtype == np.float64
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    assert np.abs(P @ P - P).max() < 1e-8
    assert st.rank == np.linalg.matrix_rank(phi) == min(n, d)
    assert np.abs(phi @ P - phi).max() < 1e-8
    if n < d:  # a direction orthogonal to the class's rows is removed
        v = np.linalg.svd(phi)[2][-1]
        assert np.abs(v @ P).max() < 1e-8


def test_dead_units_and_the_literal_rule():
    rng = np.random.RandomState(1)
    phi = np.maximum(rng.randn(30, 12), 0)
    phi[:, [3, 7]] = 0.0  # dead ReLU units
    rel, k_rel = row_space_projector(phi.T @ phi, "relative")
    lit, k_lit = row_space_projector(phi.T @ phi, "literal")
    assert k_rel == 10 and np.abs(rel[:, [3, 7]]).max() < 1e-10
    assert k_lit >= k_rel  # s > 0 also keeps round-off-sized singular values
    low = rng.rand(5, 12)  # rank 5 < d
    _, k_rel = row_space_projector(low.T @ low, "relative")
    _, k_lit = row_space_projector(low.T @ low, "literal")
    assert k_rel == 5 and k_lit > 5
    with pytest.raises(ValueError):
        row_space_projector(np.eye(3), "other")


def test_prototype_term_equals_the_class_cross_correlation():
    """Σ_i x_i over class c = N_c μ_c, i.e. the prototype term of Q is Φ_cᵀ Y_c exactly."""
    rng = np.random.RandomState(2)
    phi = rng.randn(37, 9)
    y = rng.randint(0, 3, size=37)
    mem = ClassMemory()
    assert mem.add(phi, y) == [0, 1, 2]
    Y = np.eye(3)[y]
    cross = phi.T @ Y
    for c in range(3):
        st = mem.classes[c]
        assert st.count == (y == c).sum()
        np.testing.assert_allclose(st.count * st.mean, cross[:, c], rtol=0, atol=1e-12)
        np.testing.assert_allclose(st.gram, phi[y == c].T @ phi[y == c], atol=1e-12)
    with pytest.raises(ValueError, match="already in memory"):
        mem.add(phi[:2], np.array([0, 0]))


def test_apply_moves_statistics_by_the_map():
    rng = np.random.RandomState(3)
    phi = rng.randn(20, 6)
    W = rng.randn(6, 6)
    mem = ClassMemory()
    mem.add(phi, np.zeros(20, dtype=int))
    mem.apply(0, W)
    moved = ClassStats.from_features(phi @ W)
    np.testing.assert_allclose(mem.classes[0].mean, moved.mean, atol=1e-12)
    np.testing.assert_allclose(mem.classes[0].gram, moved.gram, atol=1e-10)
    np.testing.assert_allclose(mem.classes[0].projector, moved.projector, atol=1e-8)
