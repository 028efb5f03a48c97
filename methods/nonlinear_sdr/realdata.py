"""Real data shipped with scikit-learn: 2-D sufficient plots and downstream accuracy (spec §5, §7).

Datasets: diabetes (regression, p = 10), breast cancer (binary, p = 30), wine (3 classes,
p = 13), iris (3 classes, p = 4), digits (10 classes, p = 64). Predictors are standardised
(constant columns dropped) inside each fold.

Downstream protocol: 5-fold CV (stratified for classes, seed 0). In each fold the reduction is
fitted on the training part only, then a k-nearest-neighbour model (k = 5 for classes, k = 10
for diabetes) is fitted on the reduced training predictors and scored on the reduced test
predictors: accuracy, or R² for diabetes. Compared at d = 2 and at the reduction's own BIC d̂
against the same model on the first d principal components, on all of X, and against the
majority class (or the training mean, R² ≈ 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from methods.nonlinear_sdr import config
from methods.nonlinear_sdr.estimator import PrincipalMachineSDR

DATASETS = config.DATASETS
REAL_ESTIMATORS: dict[str, dict[str, Any]] = {
    "SIR": {"method": "sir"},
    "PSVM": {"method": "linear"},
    "kernel PSVM": {"method": "kernel"},
    "neural PSVM": {"method": "neural"},
}


@dataclass
class Dataset:
    name: str
    x: np.ndarray
    y: np.ndarray
    kind: str  # continuous | categorical
    feature_names: list[str]
    target_names: list[str]


def load(name: str) -> Dataset:
    """One of :data:`DATASETS`, from scikit-learn's bundled files (no download)."""
    from sklearn import datasets

    loaders = {
        "diabetes": datasets.load_diabetes,
        "breast_cancer": datasets.load_breast_cancer,
        "wine": datasets.load_wine,
        "iris": datasets.load_iris,
        "digits": datasets.load_digits,
    }
    if name not in loaders:
        raise ValueError(f"unknown dataset {name!r}; one of {', '.join(DATASETS)}")
    b = loaders[name]()
    kind = "continuous" if name == "diabetes" else "categorical"
    names = [str(t) for t in getattr(b, "target_names", [])] or ["target"]
    return Dataset(name, np.asarray(b.data, float), np.asarray(b.target), kind, list(map(str, b.feature_names)), names)


def standardize(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Scale by the training mean/sd, dropping columns constant in ``train``."""
    sd = train.std(axis=0)
    keep = sd > 1e-12
    mu, sd = train.mean(axis=0)[keep], sd[keep]
    return [(a[:, keep] - mu) / sd for a in (train, *others)]


def _model(kind: str):
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

    return KNeighborsRegressor(n_neighbors=10) if kind == "continuous" else KNeighborsClassifier(n_neighbors=5)


def _score(kind: str, xtr: np.ndarray, ytr: np.ndarray, xte: np.ndarray, yte: np.ndarray) -> float:
    from sklearn.metrics import accuracy_score, r2_score

    pred = _model(kind).fit(xtr, ytr).predict(xte)
    return float(r2_score(yte, pred) if kind == "continuous" else accuracy_score(yte, pred))


def _folds(ds: Dataset, k: int = 5):
    from sklearn.model_selection import KFold, StratifiedKFold

    cv = (
        KFold(k, shuffle=True, random_state=0)
        if ds.kind == "continuous"
        else StratifiedKFold(k, shuffle=True, random_state=0)
    )
    return cv.split(ds.x, ds.y)


def downstream(
    ds: Dataset,
    estimators: Sequence[str] = tuple(REAL_ESTIMATORS),
    *,
    neural_steps: int = 400,
    folds: int = 5,
    device: str = "cpu",
    amp: str = "off",
) -> dict[str, dict[str, float]]:
    """Mean CV score per reduction at d = 2 and at its BIC d̂, with the PCA score at the same d.

    ``folds`` holds every fold's value of each score (the same folds for every reduction: paired).

    ``device``/``amp``: where the neural machine trains.
    """
    from sklearn.decomposition import PCA

    scores: dict[str, dict[str, list[float]]] = {}

    def add(name: str, key: str, v: float) -> None:
        scores.setdefault(name, {}).setdefault(key, []).append(v)

    for tr, te in _folds(ds, folds):
        xtr, xte = standardize(ds.x[tr], ds.x[te])
        ytr, yte = ds.y[tr], ds.y[te]
        pca = PCA().fit(xtr)
        ptr, pte = pca.transform(xtr), pca.transform(xte)
        add("all of X", "score_d2", _score(ds.kind, xtr, ytr, xte, yte))
        add("PCA", "score_d2", _score(ds.kind, ptr[:, :2], ytr, pte[:, :2], yte))
        if ds.kind == "continuous":
            add("training mean", "score_d2", float(1 - np.mean((yte - ytr.mean()) ** 2) / np.var(yte)))
        else:
            values, counts = np.unique(ytr, return_counts=True)
            add("majority class", "score_d2", float(np.mean(yte == values[np.argmax(counts)])))
        for name in estimators:
            kw = {**REAL_ESTIMATORS[name], "steps": neural_steps, "response": ds.kind, "device": device, "amp": amp}
            est = PrincipalMachineSDR(n_components="auto", **kw).fit(xtr, ytr)
            d = est.bic_order_
            g_tr, g_te = est.sufficient_predictors(xtr, max(d, 2)), est.sufficient_predictors(xte, max(d, 2))
            add(name, "dhat", float(d))
            add(name, "score_dhat", _score(ds.kind, g_tr[:, :d], ytr, g_te[:, :d], yte))
            add(name, "pca_dhat", _score(ds.kind, ptr[:, :d], ytr, pte[:, :d], yte))
            add(name, "score_d2", _score(ds.kind, g_tr[:, :2], ytr, g_te[:, :2], yte))
    return {
        name: {k: float(np.mean(v)) for k, v in d.items()}
        | {"sd_d2": float(np.std(d["score_d2"])), "folds": {k: [float(x) for x in v] for k, v in d.items()}}
        for name, d in scores.items()
    }


def sufficient_plot(
    datasets: Sequence[str],
    estimators: Sequence[str] = ("PSVM", "kernel PSVM", "neural PSVM"),
    *,
    neural_steps: int = 400,
    device: str = "cpu",
    amp: str = "off",
):
    """A matplotlib figure: one row per dataset, PCA and each reduction's (ĝ_1, ĝ_2) coloured by Y."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.decomposition import PCA

    cols = ["PCA", *estimators]
    fig, axes = plt.subplots(len(datasets), len(cols), figsize=(3.1 * len(cols), 2.8 * len(datasets)), squeeze=False)
    for i, name in enumerate(datasets):
        ds = load(name)
        (x,) = standardize(ds.x)
        for j, col in enumerate(cols):
            if col == "PCA":
                g = PCA(2).fit_transform(x)
            else:
                kw = {**REAL_ESTIMATORS[col], "steps": neural_steps, "response": ds.kind, "device": device, "amp": amp}
                g = PrincipalMachineSDR(n_components=2, **kw).fit_transform(x, ds.y)
                if g.shape[1] < 2:
                    g = np.column_stack([g[:, 0], np.zeros(len(g))])
            ax = axes[i, j]
            cmap = "viridis" if ds.kind == "continuous" else "tab10"
            ax.scatter(g[:, 0], g[:, 1], c=ds.y, s=5, cmap=cmap, alpha=0.75)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{name}: {col}", fontsize=9)
    fig.tight_layout()
    return fig
