"""A scikit-learn estimator for the principal-machine family and its comparators.

``PrincipalMachineSDR(method=...)`` fits on (X, y) and ``transform`` returns the sufficient
predictors ĝ_1..ĝ_d (columns in eigenvalue order):

* ``linear``: linear principal machine (PSVM with the hinge loss), candidate matrix in the
  Σ̂-whitened coordinates, directions ``directions_`` = Σ̂^{−1/2}v_j (p×d);
* ``kernel``: kernel principal machine on the kernel-PCA basis (Gaussian kernel, median
  heuristic, b = ⌊n/3⌋);
* ``neural``: the shared-trunk MLP principal machine;
* ``sir``, ``save``, ``dr``, ``phd``: the classical comparators (:mod:`.classic`).

``loss`` is one loss or several (``"ensemble"`` = hinge, logistic, squared hinge, least
squares): the ensemble over loss functions and over the dichotomies of :mod:`.slicing`.
``n_components="auto"`` picks d by the BIC-type criterion of :mod:`.order`.

>>> from sklearn.datasets import load_wine
>>> X, y = load_wine(return_X_y=True)
>>> PrincipalMachineSDR(method="kernel", n_components=2).fit_transform(X, y).shape
(178, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from methods.nonlinear_sdr.basis import KernelBasis, LinearBasis
from methods.nonlinear_sdr.classic import CLASSIC, classic_matrix
from methods.nonlinear_sdr.machines import LOSSES, candidate_matrix, eigh_desc
from methods.nonlinear_sdr.neural import NeuralConfig, NeuralMachine
from methods.nonlinear_sdr.order import bic_order, ladle_k_max, ladle_order
from methods.nonlinear_sdr.slicing import dichotomies

METHODS = ("linear", "kernel", "neural", *CLASSIC)
MACHINES = ("linear", "kernel", "neural")


def resolve_losses(loss: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``"ensemble"`` → every loss; a comma-separated string or a sequence → those losses."""
    if isinstance(loss, str):
        items = list(LOSSES) if loss == "ensemble" else [s.strip() for s in loss.split(",") if s.strip()]
    else:
        items = list(loss)
    bad = [s for s in items if s not in LOSSES]
    if not items or bad:
        raise ValueError(f"loss must be 'ensemble' or among {', '.join(LOSSES)}; got {loss!r}")
    return tuple(dict.fromkeys(items))


class PrincipalMachineSDR(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Sufficient dimension reduction by principal machines (linear, kernel, neural) or SIR/SAVE/DR/pHd.

    Parameters
    ----------
    method : {"linear", "kernel", "neural", "sir", "save", "dr", "phd"}, default "linear"
    n_components : int or "auto", default "auto" (BIC-type order determination)
    n_slices : int, default 10. Slices H of a continuous Y (H − 1 left-vs-right problems); also the
        number of class weights for a binary Y.
    loss : str or tuple of str, default "hinge". "ensemble" for all four losses.
    lam : float, default 1.0. λ of wᵀw + (λ/n) Σ L.
    response : {"auto", "continuous", "categorical"}, default "auto".
    multiclass : {"ovr", "ovo", "both"}, default "ovr".
    slice_vs_rest : bool, default False. Add slice-vs-rest problems for a continuous Y.
    kernel : {"rbf", "linear"}, default "rbf"; gamma : float or None (median heuristic);
    n_basis : int or None (⌊n/3⌋).
    hidden, steps, lr : the neural machine's width, full-batch steps and learning rate.
    device : str, default "cpu". Where the neural machine trains ("cpu", "cuda", "auto" or any torch
        device); the other methods run in NumPy on the CPU and ignore it.
    amp : {"off", "bf16"}, default "off". bfloat16 autocast while the neural machine trains.
    bic_c : float, default 1.0. The constant c of the BIC-type criterion.
    order : {"bic", "ladle"}, default "bic". How ``n_components="auto"`` picks d; the ladle estimator
        (linear methods only) refits on ``n_boot`` bootstrap samples.
    random_state : int, default 0 (the neural machine's seed).
    """

    def __init__(
        self,
        method: str = "linear",
        n_components: int | str = "auto",
        n_slices: int = 10,
        loss: str | tuple[str, ...] = "hinge",
        lam: float = 1.0,
        response: str = "auto",
        multiclass: str = "ovr",
        slice_vs_rest: bool = False,
        kernel: str = "rbf",
        gamma: float | None = None,
        n_basis: int | None = None,
        hidden: int = 64,
        steps: int = 400,
        lr: float = 1e-2,
        bic_c: float = 1.0,
        order: str = "bic",
        n_boot: int = 20,
        random_state: int = 0,
        device: str = "cpu",
        amp: str = "off",
    ) -> None:
        self.method = method
        self.n_components = n_components
        self.n_slices = n_slices
        self.loss = loss
        self.lam = lam
        self.response = response
        self.multiclass = multiclass
        self.slice_vs_rest = slice_vs_rest
        self.kernel = kernel
        self.gamma = gamma
        self.n_basis = n_basis
        self.hidden = hidden
        self.steps = steps
        self.lr = lr
        self.bic_c = bic_c
        self.order = order
        self.n_boot = n_boot
        self.random_state = random_state
        self.device = device
        self.amp = amp

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _check_params(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}; got {self.method!r}")
        if not (self.n_components == "auto" or (isinstance(self.n_components, int) and self.n_components >= 1)):
            raise ValueError(f"n_components must be 'auto' or a positive int; got {self.n_components!r}")
        if self.response not in ("auto", "continuous", "categorical"):
            raise ValueError(f"response must be auto, continuous or categorical; got {self.response!r}")
        if self.multiclass not in ("ovr", "ovo", "both"):
            raise ValueError(f"multiclass must be ovr, ovo or both; got {self.multiclass!r}")
        if self.order not in ("bic", "ladle"):
            raise ValueError(f"order must be bic or ladle; got {self.order!r}")
        if self.order == "ladle" and self.method in ("kernel", "neural"):
            raise ValueError("the ladle estimator needs a linear method (its bootstrap compares subspaces of R^p)")
        if not self.lam > 0 or int(self.n_slices) < 2:
            raise ValueError("need lam > 0 and n_slices >= 2")

    def fit(self, X: Any, y: Any) -> PrincipalMachineSDR:
        """Estimate the sufficient predictors from (X, y)."""
        self._check_params()
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=np.float64, y_numeric=False)
        n = len(X)
        problems, kind = dichotomies(
            y,
            kind=self.response,
            n_slices=int(self.n_slices),
            slice_vs_rest=self.slice_vs_rest,
            multiclass=self.multiclass,
        )
        self.response_kind_ = kind
        self.n_problems_ = len(problems)
        self.directions_ = None
        if self.method == "neural":
            cfg = NeuralConfig(
                hidden=self.hidden,
                steps=self.steps,
                lr=self.lr,
                seed=self.random_state,
                device=str(self.device),
                amp=self.amp,
            )
            self.neural_ = NeuralMachine(cfg).fit(X, problems, losses=resolve_losses(self.loss), lam=self.lam)
            vals = self.neural_.eigenvalues_
            available = len(vals)
        else:
            basis = KernelBasis(self.kernel, self.gamma, self.n_basis) if self.method == "kernel" else LinearBasis()
            self.basis_ = basis.fit(X)
            phi = basis.transform(X)
            if self.method in MACHINES:
                cand, _ = candidate_matrix(phi, problems, losses=resolve_losses(self.loss), lam=self.lam)
            else:
                cand = classic_matrix(self.method, phi, y, kind, int(self.n_slices))
            vals, vecs = eigh_desc(cand)
            self.candidate_ = cand
            self.eigenvectors_ = vecs
            available = basis.dim
            if self.method != "kernel":
                dirs = basis.to_x_space(vecs)
                self.directions_ = dirs / np.linalg.norm(dirs, axis=0, keepdims=True)
        self.eigenvalues_ = vals
        rank = int(np.sum(vals > 1e-12 * max(float(vals[0]), 1e-300))) if len(vals) else 0
        self.bic_order_ = bic_order(vals, n, self.bic_c, k_max=max(1, min(rank, available)))
        chosen = self.bic_order_
        if self.order == "ladle":
            self.ladle_order_, self.ladle_criterion_ = self._ladle(X, y, vals)
            chosen = max(1, self.ladle_order_)
        want = chosen if self.n_components == "auto" else int(self.n_components)
        self.n_components_ = max(1, min(want, available))
        self._n_features_out = self.n_components_
        return self

    def _ladle(self, x: np.ndarray, y: np.ndarray, vals: np.ndarray) -> tuple[int, np.ndarray]:
        """Ladle order from ``n_boot`` bootstrap refits (same parameters, BIC order inside)."""
        from sklearn.base import clone

        rng = np.random.default_rng(self.random_state)
        boots = []
        for _ in range(int(self.n_boot)):
            idx = rng.integers(0, len(x), len(x))
            try:
                boots.append(clone(self).set_params(order="bic").fit(x[idx], y[idx]).directions_)
            except ValueError:  # a resample with a single response value: skip it
                continue
        if not boots:
            return self.bic_order_, np.zeros(1)
        return ladle_order(vals, self.directions_, boots, ladle_k_max(x.shape[1]))

    def transform(self, X: Any) -> np.ndarray:
        """The sufficient predictors ĝ_1..ĝ_d at X (n×d), d = ``n_components_``."""
        return self.sufficient_predictors(X, self.n_components_ if hasattr(self, "n_components_") else None)

    def sufficient_predictors(self, X: Any, d: int | None = None) -> np.ndarray:
        """The first ``d`` sufficient predictors at X (all of them when ``d`` is None)."""
        check_is_fitted(self, "n_components_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.method == "neural":
            return self.neural_.transform(X)[:, :d]
        return self.basis_.transform(X) @ self.eigenvectors_[:, :d]
