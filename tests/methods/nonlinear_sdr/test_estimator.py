"""The scikit-learn estimator: sklearn's own checks, and recovery of known structure."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from methods.nonlinear_sdr import PrincipalMachineSDR
from methods.nonlinear_sdr.simulate import MODELS, abs_spearman, generate, subspace_distance


@parametrize_with_checks(
    [
        PrincipalMachineSDR(),
        PrincipalMachineSDR(method="kernel", n_components=2),
        PrincipalMachineSDR(method="sir", loss="ensemble"),
        PrincipalMachineSDR(method="neural", steps=15, hidden=8),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_linear_psvm_recovers_c3_direction():
    x, y = generate(MODELS["C3"], 600, 8, np.random.default_rng(0))
    est = PrincipalMachineSDR(n_components="auto").fit(x, y)
    assert est.response_kind_ == "categorical" and est.n_problems_ == 9  # binary: 9 class weights
    assert est.n_components_ == 1
    assert subspace_distance(est.directions_[:, :1], MODELS["C3"].basis(8)) < 0.3
    assert est.transform(x).shape == (600, 1)
    assert est.get_feature_names_out().tolist() == ["principalmachinesdr0"]


def test_kernel_and_neural_find_the_nonlinear_predictor_linear_cannot():
    rng = np.random.default_rng(1)
    x, y = generate(MODELS["M4"], 300, 6, rng)
    xt = rng.standard_normal((500, 6))
    r = MODELS["M4"].predictor(xt)
    rho = {
        m: abs_spearman(PrincipalMachineSDR(method=m, n_components=1, steps=200).fit(x, y).transform(xt)[:, 0], r)
        for m in ("linear", "kernel", "neural")
    }
    assert rho["kernel"] > 0.8 and rho["neural"] > 0.8 and rho["linear"] < 0.3, rho


def test_params_are_validated():
    x, y = np.random.default_rng(0).standard_normal((30, 3)), np.arange(30.0)
    for bad in ({"method": "pca"}, {"n_components": 0}, {"loss": "l1"}, {"lam": -1}, {"response": "ordinal"}):
        with pytest.raises(ValueError):
            PrincipalMachineSDR(**bad).fit(x, y)
    with pytest.raises(ValueError, match="single value"):
        PrincipalMachineSDR().fit(x, np.zeros(30))
