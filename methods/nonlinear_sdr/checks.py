"""The spec's §7 correctness checks, each returning numbers the report prints and the tests assert on."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from methods.nonlinear_sdr.basis import LinearBasis
from methods.nonlinear_sdr.estimator import PrincipalMachineSDR
from methods.nonlinear_sdr.machines import fit_machine
from methods.nonlinear_sdr.simulate import MODELS, chance_distance, generate, subspace_distance
from methods.nonlinear_sdr.slicing import continuous_dichotomies


def _correlated(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = np.eye(p) + 0.5 * rng.standard_normal((p, p))
    x0, y = generate(MODELS["M1"], n, p, rng)
    return x0 @ a.T + rng.standard_normal(p), y, a


def svc_equivalence(n: int = 120, p: int = 4, lam: float = 10.0, seed: int = 0) -> float:
    """Cosine between ψ̂ = Σ̂^{−1/2}w (SVC on whitened Z) and the primal minimiser of
    ψᵀΣ̂ψ + (λ/n)Σ[1 − Ỹ(ψᵀ(X − X̄) − t)]_+ solved directly in x-space (SLSQP on the slack form)."""
    x, y, _ = _correlated(n, p, seed)
    d = continuous_dichotomies(y, 2)[0]  # Y above/below its median
    basis = LinearBasis().fit(x)
    w, _ = fit_machine(basis.transform(x), d, loss="hinge", lam=lam)
    psi_svc = basis.to_x_space(w)
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / n
    lab = d.labels.astype(float)

    def fun(v):  # v = (ψ, t, ξ)
        psi, xi = v[:p], v[p + 1 :]
        return psi @ cov @ psi + lam / n * xi.sum()

    def jac(v):
        g = np.zeros_like(v)
        g[:p] = 2 * cov @ v[:p]
        g[p + 1 :] = lam / n
        return g

    a = np.zeros((n, p + 1 + n))  # ξ_i − 1 + y_i(ψᵀx_i − t) ≥ 0
    a[:, :p] = lab[:, None] * xc
    a[:, p] = -lab
    a[:, p + 1 :] = np.eye(n)
    cons = [{"type": "ineq", "fun": lambda v: a @ v - 1.0, "jac": lambda v: a}]
    bounds = [(None, None)] * (p + 1) + [(0, None)] * n
    v0 = np.concatenate([np.zeros(p + 1), np.ones(n)])
    res = minimize(fun, v0, jac=jac, constraints=cons, bounds=bounds, method="SLSQP", options={"maxiter": 500})
    psi = res.x[:p]
    return float(abs(psi @ psi_svc) / (np.linalg.norm(psi) * np.linalg.norm(psi_svc)))


def affine_equivariance(n: int = 300, p: int = 6, seed: int = 1) -> float:
    """‖P̂ − P‖ between the directions fitted on AX + b and A^{−ᵀ} times those fitted on X (all p)."""
    x, y, _ = _correlated(n, p, seed)
    rng = np.random.default_rng(seed + 100)
    a = np.eye(p) + 0.4 * rng.standard_normal((p, p))
    est = PrincipalMachineSDR(n_components=2).fit(x, y)
    est_a = PrincipalMachineSDR(n_components=2).fit(x @ a.T + rng.standard_normal(p), y)
    return subspace_distance(est_a.directions_[:, :2], np.linalg.solve(a.T, est.directions_[:, :2]))


def monotone_invariance(n: int = 300, p: int = 6, seed: int = 2) -> float:
    """max |difference| of the eigenvalues when Y is replaced by exp(Y) (labels unchanged → 0)."""
    x, y, _ = _correlated(n, p, seed)
    e1 = PrincipalMachineSDR().fit(x, y).eigenvalues_
    e2 = PrincipalMachineSDR().fit(x, np.exp(y)).eigenvalues_
    return float(np.max(np.abs(e1 - e2)))


def psd_orthonormal(n: int = 300, p: int = 6, seed: int = 3) -> dict[str, float]:
    """Asymmetry and smallest eigenvalue of M̂, and ‖VᵀV − I‖ of its eigenvectors."""
    x, y, _ = _correlated(n, p, seed)
    est = PrincipalMachineSDR(loss="ensemble").fit(x, y)
    m = est.candidate_
    v = est.eigenvectors_
    return {
        "asymmetry": float(np.max(np.abs(m - m.T))),
        "min_eigenvalue": float(np.linalg.eigvalsh(m).min()),
        "orthonormality_error": float(np.max(np.abs(v.T @ v - np.eye(v.shape[1])))),
    }


def c3_rate(ns: tuple[int, ...] = (100, 200, 400, 800, 1600), reps: int = 10, p: int = 10) -> dict[str, object]:
    """Linear PSVM on C3: mean ‖P̂ − P‖ per n and the slope of log error vs log n (≈ −0.5)."""
    model = MODELS["C3"]
    means = []
    for n in ns:
        errs = []
        for r in range(reps):
            x, y = generate(model, n, p, np.random.default_rng(10_000 + 97 * r + n))
            est = PrincipalMachineSDR(n_components=1, response="categorical").fit(x, y)
            errs.append(subspace_distance(est.directions_[:, :1], model.basis(p)))
        means.append(float(np.mean(errs)))
    slope = float(np.polyfit(np.log(ns), np.log(means), 1)[0])
    return {"n": list(ns), "mean_distance": means, "slope": slope}


def chance_baseline(n: int = 200, p: int = 10, reps: int = 20) -> dict[str, float]:
    """Linear PSVM on M1 with Y shuffled: mean ‖P̂ − P‖ (d = 2) against √(2d − 2d²/p)."""
    model = MODELS["M1"]
    errs = []
    for r in range(reps):
        rng = np.random.default_rng(20_000 + r)
        x, y = generate(model, n, p, rng)
        est = PrincipalMachineSDR(n_components=2).fit(x, rng.permutation(y))
        errs.append(subspace_distance(est.directions_[:, :2], model.basis(p)))
    return {"mean_distance": float(np.mean(errs)), "sd": float(np.std(errs)), "chance": chance_distance(2, p)}


def kernel_equals_linear(n: int = 300, p: int = 6, seed: int = 4) -> float:
    """Kernel PSVM with a linear kernel and b = p vs linear PSVM: ‖P̂ − P‖ of the first two directions.

    The kernel version's ĝ_j are linear in x; their coefficients come from least squares of ĝ_j on X.
    """
    x, y, _ = _correlated(n, p, seed)
    lin = PrincipalMachineSDR(n_components=2).fit(x, y)
    ker = PrincipalMachineSDR(method="kernel", kernel="linear", n_basis=p, n_components=2).fit(x, y)
    g = ker.transform(x)
    coef, *_ = np.linalg.lstsq(np.column_stack([x, np.ones(n)]), g, rcond=None)
    return subspace_distance(coef[:p], lin.directions_[:, :2])


def hinge_profile(
    model: str = "M1",
    n: int = 500,
    p: int = 10,
    lams: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0),
    reps: int = 5,
    n_slices: int = 10,
    lam_limit: float = 1e-3,
) -> dict[str, list[float]]:
    """How much of each left-vs-right hinge SVM of linear PSVM is regularised away, per λ.

    In wᵀw + (λ/n) Σ s_i [1 − y_i(wᵀφ_i − t)]_+ a sample with margin y_i(wᵀφ_i − t) < 1 is *active*. As
    λ → 0, ŵ → 0 and the offset t alone decides which samples are active (the whole smaller class and as
    many of the larger class as balance it, those nearest the cut); stationarity then gives
    ŵ = (λ/2n) Σ_active s_i y_i φ_i, a class-mean contrast over that fixed set, so ŵ's *direction* no longer
    depends on λ (its length grows like λ, and M̂'s eigenvectors ignore lengths): the fully regularised regime.
    Returns, per λ (mean over the H − 1 problems and ``reps`` replications): ``active`` (share of active
    samples), ``limit_cos`` (|cos| between ŵ_λ and ŵ at ``lam_limit``: 1 inside the regime),
    ``norm_per_lam`` (‖ŵ‖/λ: constant inside the regime) and ``ratio`` (λ̂₂/λ̂₁ of M̂).
    """
    keys = ("active", "limit_cos", "norm_per_lam", "ratio")
    out: dict[str, list[float]] = {"lam": [float(x) for x in lams], **{k: [] for k in keys}}
    data = []
    for r in range(reps):
        x, y = generate(MODELS[model], n, p, np.random.default_rng(r))
        phi = LinearBasis().fit(x).transform(x)
        probs = continuous_dichotomies(y, n_slices)
        data.append((phi, probs, [fit_machine(phi, d, loss="hinge", lam=lam_limit)[0] for d in probs]))
    for lam in lams:
        vals: dict[str, list[float]] = {k: [] for k in keys}
        for phi, probs, limits in data:
            ws = []
            for d, w0 in zip(probs, limits, strict=True):
                w, t = fit_machine(phi, d, loss="hinge", lam=lam)
                m = d.mask
                vals["active"].append(float(np.mean(d.labels[m] * (phi[m] @ w - t) < 1.0)))
                vals["limit_cos"].append(float(abs(w @ w0) / (np.linalg.norm(w) * np.linalg.norm(w0) + 1e-300)))
                vals["norm_per_lam"].append(float(np.linalg.norm(w) / lam))
                ws.append(w)
            w_all = np.stack(ws, axis=1)
            ev = np.sort(np.linalg.eigvalsh(w_all @ w_all.T))[::-1]
            vals["ratio"].append(float(ev[1] / ev[0]) if ev[0] > 0 else 0.0)
        for k in keys:
            out[k].append(float(np.mean(vals[k])))
    return out
