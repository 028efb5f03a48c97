"""Simulation models with exact ground truth and one replication of the study (spec §4, §6).

X ~ N(0, I_p), ε ~ N(0, 1). Regression models (true S_{Y|X} = span(e_1, e_2)):

* M1: Y = X_1 / [0.5 + (X_2 + 1)²] + 0.2ε
* M2: Y = X_1 (X_1 + X_2 + 1) + 0.2ε
* M3: Y = √r · log √r + 0.2ε,   r = X_1² + X_2²  (nonlinear predictor r)
* M4: Y = r + 0.2ε              (symmetric: first-moment methods fail)

Classification models:

* C1: Y = 1{r > 1.386} (median of χ²_2), predictor r;
* C2: three classes by the tertiles of |X_1| + |X_2|, predictor |X_1| + |X_2|;
* C3: Y = 1{X_1 + X_2 + 0.5ε > 0}, S = span(e_1 + e_2), d = 1, predictor X_1 + X_2.

The "true predictor" of M1/M2 is the regression function itself (with additive noise the
central σ-field is σ(m(X))). Contamination: a share of responses is replaced by 100 × Cauchy
draws (regression) or relabelled to a random other class (classification); the truth is unchanged.

Metrics: ‖P̂ − P‖_F of the first d_lin directions (linear methods), |Spearman(ĝ_1(X_test), true
predictor)| on 1,000 fresh test points (every method), the BIC order d̂ and the leading eigenvalue
ratios λ̂_k/λ̂_1 (``eig``; the BIC-type criterion depends on the eigenvalues only through them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from methods.nonlinear_sdr import config
from methods.nonlinear_sdr.estimator import PrincipalMachineSDR

CHI2_2_MEDIAN = 2 * np.log(2)  # 1.386
# tertiles of |X1| + |X2| for independent standard normals (from a 4e6-sample Monte Carlo, seed 0)
C2_TERTILES = (1.1332, 1.8799)


@dataclass(frozen=True)
class Model:
    name: str
    kind: str  # "continuous" | "categorical"
    basis: Callable[[int], np.ndarray]  # p -> p×d_lin true basis
    predictor: Callable[[np.ndarray], np.ndarray]  # X -> the true (nonlinear) sufficient predictor
    response: Callable[[np.ndarray, np.ndarray], np.ndarray]  # (X, ε) -> Y
    formula: str

    def d_lin(self, p: int = 10) -> int:
        return self.basis(p).shape[1]


def _e12(p: int) -> np.ndarray:
    b = np.zeros((p, 2))
    b[0, 0] = b[1, 1] = 1.0
    return b


def _e1_plus_e2(p: int) -> np.ndarray:
    b = np.zeros((p, 1))
    b[:2, 0] = 1 / np.sqrt(2)
    return b


def _r(x: np.ndarray) -> np.ndarray:
    return x[:, 0] ** 2 + x[:, 1] ** 2


def _m1(x):
    return x[:, 0] / (0.5 + (x[:, 1] + 1) ** 2)


def _m2(x):
    return x[:, 0] * (x[:, 0] + x[:, 1] + 1)


def _m3(x):
    s = np.sqrt(_r(x))
    return s * np.log(s)


def _c2(x, e):
    a = np.abs(x[:, 0]) + np.abs(x[:, 1])
    return np.digitize(a, C2_TERTILES)


MODELS: dict[str, Model] = {
    "M1": Model("M1", "continuous", _e12, _m1, lambda x, e: _m1(x) + 0.2 * e, "X1/[0.5+(X2+1)²] + 0.2ε"),
    "M2": Model("M2", "continuous", _e12, _m2, lambda x, e: _m2(x) + 0.2 * e, "X1(X1+X2+1) + 0.2ε"),
    "M3": Model("M3", "continuous", _e12, _r, lambda x, e: _m3(x) + 0.2 * e, "√r·log√r + 0.2ε, r = X1²+X2²"),
    "M4": Model("M4", "continuous", _e12, _r, lambda x, e: _r(x) + 0.2 * e, "X1² + X2² + 0.2ε"),
    "C1": Model("C1", "categorical", _e12, _r, lambda x, e: (_r(x) > CHI2_2_MEDIAN).astype(int), "1{X1²+X2² > 1.386}"),
    "C2": Model(
        "C2", "categorical", _e12, lambda x: np.abs(x[:, 0]) + np.abs(x[:, 1]), _c2, "tertile of |X1|+|X2| (3 classes)"
    ),
    "C3": Model(
        "C3",
        "categorical",
        _e1_plus_e2,
        lambda x: x[:, 0] + x[:, 1],
        lambda x, e: (x[:, 0] + x[:, 1] + 0.5 * e > 0).astype(int),
        "1{X1 + X2 + 0.5ε > 0}",
    ),
}

# the estimators of the study: name -> PrincipalMachineSDR keyword arguments
ESTIMATORS: dict[str, dict[str, Any]] = {
    "SIR": {"method": "sir"},
    "SAVE": {"method": "save"},
    "DR": {"method": "dr"},
    "pHd": {"method": "phd"},
    "PSVM": {"method": "linear"},
    "PM-ensemble": {"method": "linear", "loss": "ensemble"},
    "kernel PSVM": {"method": "kernel"},
    "kernel PM-ensemble": {"method": "kernel", "loss": "ensemble"},
    "neural PSVM": {"method": "neural"},
}
assert tuple(MODELS) == config.MODELS and tuple(ESTIMATORS) == config.ESTIMATORS, "config.py's names must match"
NONLINEAR = ("kernel PSVM", "kernel PM-ensemble", "neural PSVM")
LADLE = ("PSVM",)  # estimators whose order is also chosen by the ladle (bootstrap) estimator
N_EIG = 20  # leading eigenvalue ratios kept per fit (the BIC order at another constant c is read from them)


def generate(
    model: Model, n: int, p: int, rng: np.random.Generator, contamination: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) from ``model``; a share ``contamination`` of the responses is corrupted."""
    x = rng.standard_normal((n, p))
    y = model.response(x, rng.standard_normal(n))
    k = int(round(contamination * n))
    if k:
        idx = rng.choice(n, k, replace=False)
        if model.kind == "continuous":
            y = y.astype(float).copy()
            y[idx] = 100.0 * rng.standard_cauchy(k)
        else:
            classes = np.unique(y)
            y = y.copy()
            shift = rng.integers(1, len(classes), size=k)
            codes = np.searchsorted(classes, y[idx])
            y[idx] = classes[(codes + shift) % len(classes)]
    return x, y


def subspace_distance(b_hat: np.ndarray, b: np.ndarray) -> float:
    """‖P̂ − P‖_F of the column spaces of ``b_hat`` and ``b``."""

    def proj(m: np.ndarray) -> np.ndarray:
        q, _ = np.linalg.qr(m)
        return q @ q.T

    return float(np.linalg.norm(proj(b_hat) - proj(b)))


def chance_distance(d: int, p: int) -> float:
    """√E‖P̂ − P‖_F² for a uniformly random d-dimensional subspace: √(2d − 2d²/p)."""
    return float(np.sqrt(2 * d - 2 * d * d / p))


def abs_spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.std(a) == 0 or np.std(b) == 0:
        return 0.0
    return float(abs(spearmanr(a, b)[0]))


def replicate(
    model_name: str,
    n: int,
    p: int,
    seed: int,
    *,
    estimators: Sequence[str] = tuple(ESTIMATORS),
    contamination: float = 0.0,
    lam: float = 1.0,
    n_slices: int = 10,
    neural_steps: int = 400,
    shuffle_y: bool = False,
    n_test: int = 1000,
    ladle_boot: int = 0,
    device: str = "cpu",
    amp: str = "off",
) -> dict[str, dict[str, float]]:
    """One replication: every estimator's distance, |Spearman| on fresh data, d̂ and seconds.

    With ``ladle_boot`` > 0 the estimators of :data:`LADLE` also report the ladle order (that many bootstraps).
    ``device``/``amp``: where the neural machine trains (the other estimators run in NumPy).
    """
    model = MODELS[model_name]
    rng = np.random.default_rng(seed)
    x, y = generate(model, n, p, rng, contamination)
    if shuffle_y:
        y = rng.permutation(y)
    xt = rng.standard_normal((n_test, p))
    truth = model.predictor(xt)
    b = model.basis(p)
    out: dict[str, dict[str, float]] = {}
    for name in estimators:
        kwargs = {
            **ESTIMATORS[name],
            "lam": lam,
            "n_slices": n_slices,
            "steps": neural_steps,
            "device": device,
            "amp": amp,
        }
        kwargs["response"] = model.kind
        t0 = time.perf_counter()
        est = PrincipalMachineSDR(n_components="auto", random_state=seed, **kwargs).fit(x, y)
        seconds = time.perf_counter() - t0
        g1 = est.transform(xt)[:, 0]
        row = {"rho": abs_spearman(g1, truth), "dhat": float(est.bic_order_), "seconds": seconds}
        vals = np.asarray(est.eigenvalues_, dtype=float)[:N_EIG]
        row["eig"] = [float(v / vals[0]) if vals[0] > 0 else 0.0 for v in vals]  # λ̂_k / λ̂_1: d̂ at any c
        if est.directions_ is not None:
            row["dist"] = subspace_distance(est.directions_[:, : b.shape[1]], b)
        if name in LADLE and ladle_boot > 0:
            row["dhat_ladle"] = float(est.set_params(order="ladle", n_boot=ladle_boot).fit(x, y).ladle_order_)
        out[name] = row
    return out
