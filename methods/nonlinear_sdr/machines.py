"""Principal machines on a whitened basis (spec §3.2, and §3.3 through the kernel-PCA basis).

For one dichotomy Ỹ (labels ±1, class weights s_i) and features Φ with identity sample
covariance (Φ = Σ̂^{−1/2}(X − X̄) for the linear machine, kernel-PCA scores for the kernel one)
the principal machine solves

    (ŵ, t̂) = argmin_{w, t}  wᵀw + (λ/n) Σ_i s_i L(Ỹ_i (wᵀΦ_i − t)),

which is the PSVM objective ψᵀΣ̂ψ + (λ/n)Σ[1 − Ỹ(ψᵀ(X − X̄) − t)]_+ written in ψ = Σ̂^{−1/2}w.
L is the hinge loss (PSVM) or one of the other large-margin losses of the principal-machine
family: logistic, squared hinge (L2-SVM) and least squares (LS-SVM). The normal vectors of
every dichotomy form W (b×H); the candidate matrix is M̂ = Σ_h ŵ_h ŵ_hᵀ. The ensemble over
losses sums each loss's candidate matrix scaled to unit trace, so no loss dominates by scale.

Hinge: scikit-learn's ``SVC(kernel="linear")`` on ½‖w‖² + C Σ s_i hinge with C = λ/(2n) (libsvm,
an exact dual solver with a free offset). Smooth losses: L-BFGS on the primal with its
analytic gradient; least squares has a closed form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.optimize import minimize

from methods.nonlinear_sdr.slicing import Dichotomy

Loss = Literal["hinge", "logistic", "squared_hinge", "least_squares"]
LOSSES: tuple[Loss, ...] = ("hinge", "logistic", "squared_hinge", "least_squares")


def loss_value(loss: Loss, m: np.ndarray) -> np.ndarray:
    """L(m) for margins m = Ỹ(f − t)."""
    if loss == "hinge":
        return np.maximum(0.0, 1.0 - m)
    if loss == "logistic":
        return np.logaddexp(0.0, -m)
    if loss == "squared_hinge":
        return np.maximum(0.0, 1.0 - m) ** 2
    if loss == "least_squares":
        return (1.0 - m) ** 2
    raise ValueError(f"unknown loss {loss!r}; one of {', '.join(LOSSES)}")


def _loss_grad(loss: Loss, m: np.ndarray) -> np.ndarray:
    if loss == "logistic":
        return -0.5 * (1.0 - np.tanh(m / 2.0))  # −1/(1 + e^m), overflow-free
    if loss == "squared_hinge":
        return -2.0 * np.maximum(0.0, 1.0 - m)
    if loss == "least_squares":
        return -2.0 * (1.0 - m)
    raise ValueError(f"no gradient for {loss!r}")


def objective(w: np.ndarray, t: float, phi: np.ndarray, y: np.ndarray, s: np.ndarray, lam: float, loss: Loss) -> float:
    """wᵀw + (λ/n) Σ s_i L(y_i (wᵀφ_i − t)); n counts the samples the problem uses."""
    m = y * (phi @ w - t)
    return float(w @ w + lam / len(y) * np.sum(s * loss_value(loss, m)))


def fit_machine(phi: np.ndarray, d: Dichotomy, *, loss: Loss = "hinge", lam: float = 1.0) -> tuple[np.ndarray, float]:
    """(ŵ, t̂) of one dichotomy on whitened features ``phi`` (n×b)."""
    mask = d.mask
    x, y, s = phi[mask], d.labels[mask].astype(float), d.sample_weights()
    n, b = x.shape
    if loss == "hinge":
        from sklearn.svm import SVC

        svc = SVC(kernel="linear", C=lam / (2.0 * n), tol=1e-6, max_iter=200_000)
        svc.fit(x, y, sample_weight=s)
        return svc.coef_.ravel().astype(float), float(-svc.intercept_[0])
    if loss == "least_squares":  # closed form: ridge regression of y on x with a free intercept
        xm, ym = np.average(x, axis=0, weights=s), np.average(y, weights=s)
        xc = x - xm
        a = (lam / n) * (xc.T * s) @ xc + np.eye(b)
        w = np.linalg.solve(a, (lam / n) * (xc.T * s) @ (y - ym))
        return w, float(xm @ w - ym)
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; one of {', '.join(LOSSES)}")

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, t = theta[:b], theta[b]
        m = y * (x @ w - t)
        g = lam / n * s * _loss_grad(loss, m) * y
        val = w @ w + lam / n * np.sum(s * loss_value(loss, m))
        return float(val), np.concatenate([2 * w + x.T @ g, [-g.sum()]])

    res = minimize(fun, np.zeros(b + 1), jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-10})
    return res.x[:b], float(res.x[b])


def normal_vectors(
    phi: np.ndarray, problems: Sequence[Dichotomy], *, loss: Loss = "hinge", lam: float = 1.0
) -> np.ndarray:
    """W (b×H): the normal vector of every dichotomy's separating hyperplane."""
    return np.stack([fit_machine(phi, d, loss=loss, lam=lam)[0] for d in problems], axis=1)


def candidate_matrix(
    phi: np.ndarray, problems: Sequence[Dichotomy], *, losses: Sequence[Loss] = ("hinge",), lam: float = 1.0
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """M̂ = Σ_loss M̂_loss / tr(M̂_loss), M̂_loss = Σ_h ŵ_h ŵ_hᵀ; returns M̂ and each loss's W."""
    if not losses:
        raise ValueError("at least one loss is needed")
    b = phi.shape[1]
    total = np.zeros((b, b))
    ws: dict[str, np.ndarray] = {}
    for loss in dict.fromkeys(losses):
        w = normal_vectors(phi, problems, loss=loss, lam=lam)
        ws[loss] = w
        m = w @ w.T
        tr = float(np.trace(m))
        total += m / tr if tr > 0 else m
    return total, ws


def eigh_desc(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending, clipped at 0) and orthonormal eigenvectors of a symmetric matrix."""
    vals, vecs = np.linalg.eigh((m + m.T) / 2.0)
    order = np.argsort(vals)[::-1]
    vecs = vecs[:, order]
    # fix each eigenvector's sign (largest entry positive) so refits and subsets agree
    signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(vecs.shape[1])])
    return np.clip(vals[order], 0.0, None), vecs * np.where(signs == 0, 1.0, signs)
