"""Spec §7.3–7.4: convergence orders and equal-NFE errors on analytic flows."""

import pytest
import torch

from methods.rf_solver.analytic import GaussianFlow, MixtureFlow, default_gaussian, default_mixture, reference_solve
from methods.rf_solver.convergence import gaussian_errors, mixture_errors, observed_order, round_trip_error

NFES = (8, 16, 32, 64, 128, 256)


@pytest.fixture(scope="module")
def gauss_curves():
    flow = default_gaussian()
    x0 = flow.draw(500, torch.Generator().manual_seed(0))
    return gaussian_errors(flow, x0, NFES)


@pytest.fixture(scope="module")
def mog_setup():
    flow = default_mixture()
    x0 = flow.draw(100, torch.Generator().manual_seed(0))
    return flow, x0


def test_gaussian_velocity_is_conditional_expectation():
    flow = GaussianFlow(torch.tensor([1.5]), torch.tensor([0.7]))
    g = torch.Generator().manual_seed(0)
    x0 = flow.draw(400_000, g)
    eps = torch.randn(x0.shape, generator=g, dtype=torch.float64)
    t = 0.4
    zt = (1 - t) * x0 + t * eps
    target = eps - x0
    # E[ε − X_0 | Z_t] is the least-squares predictor: the residual is uncorrelated with Z_t
    resid = target - flow.velocity(zt, t)
    assert abs(float(resid.mean())) < 5e-3
    assert abs(float((resid * zt).mean())) < 5e-3


def test_gaussian_euler_order_one(gauss_curves):
    assert observed_order(gauss_curves[1]) == pytest.approx(1.0, abs=0.15)


def test_gaussian_rf_solver2_order_at_least_1_8(gauss_curves):
    assert observed_order(gauss_curves[2]) >= 1.8


def test_gaussian_rf_solver2_ten_times_better_at_equal_nfe(gauss_curves):
    euler = {p.nfe: p.error for p in gauss_curves[1]}
    for p in gauss_curves[2]:
        assert p.nfe >= 8
        assert p.error < euler[p.nfe] / 10, p


def test_gaussian_with_flux_shift_still_second_order():
    flow = default_gaussian()
    x0 = flow.draw(200, torch.Generator().manual_seed(1))
    curves = gaussian_errors(flow, x0, (16, 32, 64, 128), shift=True)
    assert observed_order(curves[2]) >= 1.8
    assert all(a.error > 10 * b.error for a, b in zip(curves[1], curves[2]))


def test_mixture_rf_solver2_order_two(mog_setup):
    flow, x0 = mog_setup
    curves = mixture_errors(flow, x0, (32, 64, 128, 256), orders=(2,), ref_steps=1000)  # N = 16..128 steps
    assert observed_order(curves[2]) == pytest.approx(2.0, abs=0.25)


def test_mixture_round_trip_thresholds(mog_setup):
    flow, x0 = mog_setup
    assert round_trip_error(flow, x0, 32, 2) < 0.01
    assert round_trip_error(flow, x0, 32, 1) > 0.1


def test_reference_solver_matches_scipy(mog_setup):
    from scipy.integrate import solve_ivp

    flow, x0 = mog_setup
    pts = x0[:6]
    ref = reference_solve(flow, pts, 0.0, 1.0, steps=1000)[:, 0].numpy()
    # the points do not interact, so one solve of the stacked system integrates all of them
    sol = solve_ivp(
        lambda t, y: flow.velocity(torch.from_numpy(y)[:, None], t)[:, 0].numpy(),
        (0.0, 1.0),
        pts[:, 0].numpy(),
        method="DOP853",
        rtol=1e-10,
        atol=1e-12,
    )
    assert abs(sol.y[:, -1] - ref).max() < 1e-7


def test_mixture_validation():
    with pytest.raises(ValueError):
        MixtureFlow([0.5, 0.5], [[0.0], [1.0]], [[0.1], [0.5]])  # s_k < 0.2 is stiff
    with pytest.raises(ValueError):
        MixtureFlow([0.5], [[0.0], [1.0]], [[0.3], [0.5]])
