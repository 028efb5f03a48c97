"""Ridge classifier reconstruction (spec §3.5): analytic-learning equivalence, normalisation, growth."""

import numpy as np
import pytest

from methods.dpcr.arms import StatisticsArm, select_gamma
from methods.dpcr.calibration import tssp_projection
from methods.dpcr.ridge import CurrentTerm, RidgeClassifier, joint_ridge, ridge_solution


def _tasks(rng, d=16, per_class=25, n_tasks=3, k=2):
    centres = 3 * rng.randn(n_tasks * k, d)
    out = []
    for t in range(n_tasks):
        labels = np.repeat(np.arange(t * k, (t + 1) * k), per_class)
        out.append((centres[labels] + rng.randn(len(labels), d), labels))
    return out


@pytest.mark.parametrize("arm_name", ["dpcr", "tssp", "dpcr_literal", "ridge_uncal"])
@pytest.mark.parametrize("use_current", [False, True])
def test_frozen_backbone_dpcr_equals_joint_ridge(arm_name, use_current):
    """f_t = f_{t-1} ⇒ P_t = I, calibration is a no-op, and RRCR = joint ridge on all tasks (< 1e-8)."""
    rng = np.random.RandomState(0)
    tasks = _tasks(rng)
    arm = StatisticsArm.create(arm_name)
    gamma = 5.0
    seen_x, seen_y = [], []
    for t, (x, y) in enumerate(tasks):
        if t > 0:
            P = tssp_projection(x, x, gamma_p=1e-14)  # the same features before and after
            assert np.abs(P - np.eye(P.shape[0])).max() < 1e-6
            arm.shift(P)
        arm.add(x, y)
        current = CurrentTerm.from_features(x, y, tuple(np.unique(y))) if use_current else None
        W = ridge_solution(arm.memory, gamma, current=current)
        seen_x.append(x)
        seen_y.append(y)
        J = joint_ridge(np.concatenate(seen_x), np.concatenate(seen_y), gamma, int(y.max()) + 1)
        assert W.shape == J.shape == (x.shape[1], 2 * (t + 1))  # grows by the task size
        assert np.abs(W - J).max() < 1e-8


def test_classifier_rows_have_unit_norm_and_dimensions_grow():
    rng = np.random.RandomState(1)
    arm = StatisticsArm.create("dpcr")
    for t, (x, y) in enumerate(_tasks(rng, n_tasks=3, k=3)):
        arm.add(x, y)
        clf = arm.refit(10.0)
        assert clf.weight.shape == (3 * (t + 1), 16)
        np.testing.assert_allclose(np.linalg.norm(clf.weight, axis=1), 1.0, atol=1e-12)
        assert (clf.predict(x) == y).mean() > 0.9
        logits = clf.logits(x[:3])
        np.testing.assert_allclose(logits, x[:3] @ clf.weight.T)


def test_count_constant_replaces_true_counts_in_q():
    rng = np.random.RandomState(2)
    arm = StatisticsArm.create("dpcr")
    x = rng.randn(30, 5)
    y = np.array([0] * 10 + [1] * 20)
    arm.add(x, y)
    R = sum(s.gram for s in arm.memory.classes.values()) + 2.0 * np.eye(5)
    Q = np.stack([500 * arm.memory.classes[c].mean for c in (0, 1)], axis=1)
    np.testing.assert_allclose(ridge_solution(arm.memory, 2.0, count_constant=500), np.linalg.solve(R, Q))
    assert not np.allclose(ridge_solution(arm.memory, 2.0), np.linalg.solve(R, Q))


def test_gamma_selection_uses_the_held_out_split():
    rng = np.random.RandomState(3)
    ((x, y),) = _tasks(rng, n_tasks=1, k=2, per_class=40)
    g, scores = select_gamma(x, y, (1.0, 10.0, 100.0), holdout=0.25, seed=0)
    assert set(scores) == {1.0, 10.0, 100.0} and g in scores
    best = max(scores.values(), key=lambda s: (s[0], -s[1]))
    assert scores[g] == best
    with pytest.raises(ValueError, match="contiguous|0..C-1"):
        arm = StatisticsArm.create("dpcr")
        arm.add(x, y + 1)
        ridge_solution(arm.memory, 1.0)


def test_zero_rows_are_left_unnormalised():
    clf = RidgeClassifier.from_solution(np.array([[0.0, 3.0], [0.0, 4.0]]))
    np.testing.assert_allclose(clf.weight, [[0.0, 0.0], [0.6, 0.8]])
