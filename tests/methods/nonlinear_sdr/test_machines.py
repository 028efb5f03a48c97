"""Principal machines: the SVC route equals the x-space primal, the other losses reach their optimum."""

import numpy as np
import pytest

from methods.nonlinear_sdr import checks
from methods.nonlinear_sdr.machines import LOSSES, candidate_matrix, fit_machine, loss_value, objective
from methods.nonlinear_sdr.slicing import continuous_dichotomies


def _data(n=150, p=4, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, p))
    z -= z.mean(0)
    y = z[:, 0] + 0.5 * z[:, 1] + 0.3 * rng.standard_normal(n)
    return z, continuous_dichotomies(y, 4)


def test_hinge_machine_equals_primal_solved_in_x_space():
    assert checks.svc_equivalence(n=80, p=3) > 0.999


@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared_hinge", "least_squares"])
def test_each_loss_is_at_its_minimum(loss):
    z, probs = _data()
    d = probs[1]
    m, y, s = d.mask, d.labels[d.mask].astype(float), d.sample_weights()
    w, t = fit_machine(z, d, loss=loss, lam=5.0)
    best = objective(w, t, z[m], y, s, 5.0, loss)
    rng = np.random.default_rng(1)
    for _ in range(50):  # no random perturbation does better
        dw, dt = 1e-2 * rng.standard_normal(w.shape), 1e-2 * rng.standard_normal()
        assert objective(w + dw, t + dt, z[m], y, s, 5.0, loss) >= best - 1e-9
    # and the normal vector points along the signal direction
    assert abs(w[0]) > abs(w[2]) and abs(w[0]) > abs(w[3])


def test_loss_values():
    m = np.array([-1.0, 0.0, 1.0, 2.0])
    assert np.allclose(loss_value("hinge", m), [2, 1, 0, 0])
    assert np.allclose(loss_value("squared_hinge", m), [4, 1, 0, 0])
    assert np.allclose(loss_value("least_squares", m), [4, 1, 0, 1])
    assert np.allclose(loss_value("logistic", m), np.log1p(np.exp(-m)))
    with pytest.raises(ValueError):
        loss_value("nope", m)


def test_loss_ensemble_sums_unit_trace_candidates():
    z, probs = _data()
    total, ws = candidate_matrix(z, probs, losses=LOSSES, lam=1.0)
    assert set(ws) == set(LOSSES) and all(w.shape == (4, len(probs)) for w in ws.values())
    assert np.trace(total) == pytest.approx(len(LOSSES))
    assert np.allclose(total, total.T) and np.linalg.eigvalsh(total).min() > -1e-12
