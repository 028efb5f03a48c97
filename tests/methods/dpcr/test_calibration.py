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


def test_energy_removed_by_the_class_projector_is_reported():
    """calibrate() returns 1 − tr(WᵀΣW)/tr(PᵀΣP): 0 for TSSP and for a full-rank class, exact for a rank-1 one."""
    rng = np.random.RandomState(3)
    d = 6
    P = rng.randn(d, d)
    mem = ClassMemory()
    mem.add(np.vstack([rng.randn(20, d), np.outer(rng.randn(5), rng.randn(d))]), np.repeat([0, 1], [20, 5]))
    before = mem.copy()
    out = calibrate(mem, P, "dpcr")
    assert set(out) == {0, 1}
    assert abs(out[0][0]) < 1e-10 and abs(out[0][1]) < 1e-10  # full rank: Π_0 = I removes nothing
    st = before.classes[1]
    W = P @ st.projector
    want = 1 - np.trace(W.T @ st.gram @ W) / np.trace(P.T @ st.gram @ P)
    assert out[1][0] == pytest.approx(want, abs=1e-10) and 0.05 < want < 1.0  # rank 1 of 6: a real loss
    assert calibrate(before.copy(), P, "tssp")[1][0] == pytest.approx(0.0, abs=1e-12)
    assert calibrate(before.copy(), P, "none") == {}


def test_revive_keeps_the_energy_of_units_dead_under_the_old_backbone():
    """A unit that was dead for the class and is alive after P_t: DPCR projects it out, dpcr_revive keeps it."""
    from methods.dpcr.calibration import dead_units

    rng = np.random.RandomState(4)
    d = 5
    phi = np.abs(rng.randn(40, d))
    phi[:, 4] = 0.0  # unit 4 dead for this class under f_{t−1}
    P = np.eye(d)
    P[0, 4] = 1.0  # under f_t unit 4 copies unit 0: it revives
    for mode, keeps in (("dpcr", False), ("dpcr_revive", True)):
        mem = ClassMemory()
        mem.add(phi, np.zeros(40, dtype=int))
        assert dead_units(mem.classes[0].gram).tolist() == [False] * 4 + [True]
        removed = calibrate(mem, P, mode)[0]
        assert removed[2] == 1  # one dead unit
        revived = mem.classes[0].mean[4]
        if keeps:
            assert revived == pytest.approx(phi[:, 0].mean()) and removed[0] == pytest.approx(0.0, abs=1e-12)
            assert mem.classes[0].rank == 4  # the revived unit lies in the (4-d) row space of P
        else:
            assert abs(revived) < 1e-12 and removed[0] > 0.05
    fresh = ClassMemory()
    fresh.add(phi, np.zeros(40, dtype=int))
    st = fresh.classes[0]
    pe = st.projector + np.diag(dead_units(st.gram).astype(float))
    np.testing.assert_allclose(pe @ pe, pe, atol=1e-10)  # Π_c + E_c is again a projector
    np.testing.assert_allclose(shift_map(P, st.projector, "dpcr_revive", st.gram), P @ pe)
    with pytest.raises(ValueError, match="Gram"):
        shift_map(P, np.eye(d), "dpcr_revive")
