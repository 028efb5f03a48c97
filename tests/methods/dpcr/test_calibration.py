"""TSSP and the dual projection (spec §3.3–3.4, checks of §7)."""

import numpy as np
import pytest

from methods.dpcr.calibration import calibrate, shift_map, tssp_projection
from methods.dpcr.memory import ClassMemory


def test_frozen_backbone_gives_identity_projection():
    phi = np.random.RandomState(0).randn(200, 16)
    P = tssp_projection(phi, phi, gamma_p=1e-9)
    assert np.abs(P - np.eye(16)).max() < 1e-6


def test_synthetic_linear_drift_is_recovered_and_statistics_follow_it():
    rng = np.random.RandomState(1)
    d = 12
    A = rng.randn(d, d) + 3 * np.eye(d)  # random invertible drift
    cur_old = rng.randn(300, d)  # current task through f_{t-1}
    P = tssp_projection(cur_old, cur_old @ A, gamma_p=1e-9)
    assert np.linalg.norm(P - A) / np.linalg.norm(A) < 1e-6

    old_feats = rng.randn(90, d)  # old classes' data, stored away (n_c > d, so Π_c = I)
    labels = np.repeat([0, 1, 2], 30)
    for mode in ("tssp", "dpcr"):
        mem = ClassMemory()
        mem.add(old_feats, labels)
        calibrate(mem, P, mode)
        truth = ClassMemory()
        truth.add(old_feats @ A, labels)  # statistics computed from the drifted data
        for c in range(3):
            np.testing.assert_allclose(mem.classes[c].mean, truth.classes[c].mean, atol=1e-6)
            np.testing.assert_allclose(mem.classes[c].gram, truth.classes[c].gram, rtol=1e-6, atol=1e-6)


def test_dual_projection_restricts_each_class_to_its_row_space():
    rng = np.random.RandomState(2)
    d = 10
    basis = rng.randn(3, d)  # class 0 lives in a 3-d subspace
    phi = rng.randn(8, 3) @ basis
    mem = ClassMemory()
    mem.add(phi, np.zeros(8, dtype=int))
    Pi = mem.classes[0].projector
    P = rng.randn(d, d)
    np.testing.assert_allclose(shift_map(P, Pi, "dpcr"), P @ Pi)
    np.testing.assert_allclose(shift_map(P, Pi, "tssp"), P)
    np.testing.assert_allclose(shift_map(P, Pi, "none"), np.eye(d))
    before = mem.copy()
    calibrate(mem, P, "none")
    np.testing.assert_array_equal(mem.classes[0].gram, before.classes[0].gram)
    calibrate(mem, P, "dpcr")
    st = mem.classes[0]
    np.testing.assert_allclose(st.mean, before.classes[0].mean @ P @ Pi, atol=1e-10)
    np.testing.assert_allclose(st.gram, (P @ Pi).T @ before.classes[0].gram @ (P @ Pi), atol=1e-8)
    assert st.rank == 3  # the projector is recomputed from the calibrated Gram
    np.testing.assert_allclose(st.mean @ st.projector, st.mean, atol=1e-8)
    with pytest.raises(ValueError):
        shift_map(P, Pi, "both")
