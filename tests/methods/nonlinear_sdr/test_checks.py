"""The spec's §7 checks at small sizes."""

import pytest

from methods.nonlinear_sdr import checks


def test_affine_equivariance_and_monotone_invariance():
    assert checks.affine_equivariance(n=150, p=4) < 1e-4
    assert checks.monotone_invariance(n=150, p=4) == 0.0


def test_candidate_psd_and_orthonormal():
    r = checks.psd_orthonormal(n=150, p=4)
    assert r["asymmetry"] < 1e-12 and r["min_eigenvalue"] > -1e-10 and r["orthonormality_error"] < 1e-10


def test_kernel_with_linear_kernel_is_linear_psvm():
    assert checks.kernel_equals_linear(n=150, p=4) < 1e-3


def test_chance_baseline_with_shuffled_y():
    r = checks.chance_baseline(n=150, p=10, reps=6)
    assert r["chance"] == pytest.approx(1.789, abs=1e-3)
    assert abs(r["mean_distance"] - r["chance"]) < 0.25


def test_c3_error_shrinks_like_root_n():
    r = checks.c3_rate(ns=(100, 400, 1600), reps=4)
    assert r["mean_distance"][0] > r["mean_distance"][-1]
    assert -0.8 < r["slope"] < -0.3


def test_hinge_profile_shows_the_fully_regularised_regime():
    """At small λ every left-vs-right SVM's ŵ has a λ-free direction and length ∝ λ; large λ leaves that regime."""
    r = checks.hinge_profile("M1", n=200, p=5, lams=(0.01, 0.1, 1000.0), reps=2)
    assert r["norm_per_lam"][0] == pytest.approx(r["norm_per_lam"][1], rel=1e-3)
    assert min(r["limit_cos"][:2]) > 0.999
    assert r["norm_per_lam"][2] < 0.5 * r["norm_per_lam"][1] and r["limit_cos"][2] < r["limit_cos"][1]
    assert r["active"][2] < r["active"][1] and r["ratio"][2] > r["ratio"][1]
