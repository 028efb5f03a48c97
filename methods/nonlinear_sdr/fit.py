"""The ``nonlinear_sdr.fit`` job: reduce a table (an uploaded CSV or a bundled dataset) and report it.

A CSV is read with pandas: one response column (any type), every other column numeric.
Limits: :data:`~methods.nonlinear_sdr.config.MAX_ROWS` rows, ``MAX_COLUMNS`` columns, the
kernel machine at most ``MAX_KERNEL_ROWS`` rows (its Gram matrix is n×n). Rows with a missing
value are dropped and counted. The report holds the eigenvalues, the BIC order, the estimated
directions (linear methods: the loadings), the 2-D sufficient plot, and a 5-fold k-NN score on
ĝ_1..ĝ_d against the first d principal components.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.jobs import JobContext, Report
from methods.nonlinear_sdr import config
from methods.nonlinear_sdr.estimator import PrincipalMachineSDR
from methods.nonlinear_sdr.realdata import Dataset, _score, load, standardize
from methods.nonlinear_sdr.slicing import response_kind


@dataclass
class Table:
    x: np.ndarray
    y: np.ndarray
    features: list[str]
    response: str
    dropped_rows: int


def read_csv(data: bytes, response: str) -> Table:
    """Parse and validate a CSV: ``response`` must be a column, the others numeric."""
    import pandas as pd

    try:
        df = pd.read_csv(io.BytesIO(data), nrows=config.MAX_ROWS + 1)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise ValueError(f"not a readable CSV: {exc}") from None
    if len(df) > config.MAX_ROWS:
        raise ValueError(f"the CSV has more than {config.MAX_ROWS} rows")
    if df.shape[1] > config.MAX_COLUMNS + 1:
        raise ValueError(f"the CSV has more than {config.MAX_COLUMNS} predictor columns")
    if response not in df.columns:
        raise ValueError(f"no column {response!r}; columns: {', '.join(map(str, df.columns[:50]))}")
    preds = df.drop(columns=[response])
    bad = [str(c) for c in preds.columns if not pd.api.types.is_numeric_dtype(preds[c])]
    if bad:
        raise ValueError(f"predictor columns must be numeric; not numeric: {', '.join(bad[:20])}")
    if preds.shape[1] < 1:
        raise ValueError("the CSV needs at least one predictor column besides the response")
    full = pd.concat([preds, df[response]], axis=1).replace([np.inf, -np.inf], np.nan).dropna()
    if len(full) < 10:
        raise ValueError(f"only {len(full)} complete rows; at least 10 are needed")
    return Table(
        full[preds.columns].to_numpy(float),
        full[response].to_numpy(),
        list(map(str, preds.columns)),
        response,
        len(df) - len(full),
    )


def _plot(g: np.ndarray, y: np.ndarray, kind: str, title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.2))
    second = g[:, 1] if g.shape[1] > 1 else np.zeros(len(g))
    if kind == "continuous":
        sc = ax.scatter(g[:, 0], second, c=y.astype(float), s=8, cmap="viridis")
        fig.colorbar(sc, ax=ax, label="Y")
    else:
        for c in np.unique(y):
            m = y == c
            ax.scatter(g[m, 0], second[m], s=8, label=str(c), alpha=0.8)
        if np.unique(y).size <= 12:
            ax.legend(fontsize=7, markerscale=2)
    ax.set_xlabel("ĝ₁(X)")
    ax.set_ylabel("ĝ₂(X)" if g.shape[1] > 1 else "(one predictor)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def cv_scores(ds: Dataset, params: dict[str, Any], d: int, folds: int = 5) -> tuple[float, float, float]:
    """Mean 5-fold k-NN score on ĝ_1..ĝ_d, on the first d PCs, and on all of X."""
    from sklearn.decomposition import PCA
    from sklearn.model_selection import KFold, StratifiedKFold

    if ds.kind == "categorical" and np.unique(ds.y, return_counts=True)[1].min() >= folds:
        cv = StratifiedKFold(folds, shuffle=True, random_state=0)
    else:
        cv = KFold(folds, shuffle=True, random_state=0)
    out = []
    for tr, te in cv.split(ds.x, ds.y):
        xtr, xte = standardize(ds.x[tr], ds.x[te])
        est = PrincipalMachineSDR(**{**params, "n_components": d}).fit(xtr, ds.y[tr])
        k = est.n_components_
        pca = PCA(min(k, xtr.shape[1])).fit(xtr)
        out.append(
            (
                _score(ds.kind, est.transform(xtr), ds.y[tr], est.transform(xte), ds.y[te]),
                _score(ds.kind, pca.transform(xtr), ds.y[tr], pca.transform(xte), ds.y[te]),
                _score(ds.kind, xtr, ds.y[tr], xte, ds.y[te]),
            )
        )
    a = np.mean(out, axis=0)
    return float(a[0]), float(a[1]), float(a[2])


def fit_report(ds: Dataset, params: dict[str, Any], *, evaluate: bool, progress: JobContext) -> Report:
    """Fit ``PrincipalMachineSDR(**params)`` on the standardised table and build the report."""
    n, p = ds.x.shape
    if params.get("response", "auto") != "auto":
        ds.kind = params["response"]
    if params.get("method") == "kernel" and n > config.MAX_KERNEL_ROWS:
        raise ValueError(f"the kernel machine takes at most {config.MAX_KERNEL_ROWS} rows (its Gram matrix is n×n)")
    (x,) = standardize(ds.x)
    progress(0.05, "fitting")
    est = PrincipalMachineSDR(**params).fit(x, ds.y)
    d = est.n_components_
    g = est.sufficient_predictors(x, max(2, d))
    vals = est.eigenvalues_
    method = params.get("method", "linear")
    report = Report(
        title=f"Sufficient dimension reduction of {ds.name} ({method})",
        summary=f"n = {n}, p = {p}, {est.response_kind_} response, {est.n_problems_} classification problems; "
        f"d = {d} ({'BIC' if params.get('n_components', 'auto') == 'auto' else 'given'}; BIC d̂ = {est.bic_order_}).",
    )
    report.metrics.update({"n": n, "p": p, "d": d, "bic_order": est.bic_order_, "problems": est.n_problems_})
    rank = max(1, int(np.sum(vals > 1e-10 * max(float(vals[0]), 1e-300))))  # numerically nonzero ones
    top = vals[: min(10, rank)]
    share = top / vals.sum() if vals.sum() > 0 else top
    report.metrics["eigenvalue_share_1"] = float(share[0])  # of the candidate matrix's leading direction
    report.add_table(
        "Eigenvalues of the candidate matrix",
        ["j", "λ̂_j", "share"],
        [[j + 1, float(v), float(s)] for j, (v, s) in enumerate(zip(top, share, strict=True))],
    )
    directions = None
    if est.directions_ is not None:
        k = min(max(d, 2), est.directions_.shape[1])
        # directions of the standardised predictors: loadings per original column
        directions = est.directions_[:, :k]
        keep = ds.x.std(axis=0) > 1e-12
        names = [f for f, kk in zip(ds.feature_names, keep, strict=True) if kk]
        order = np.argsort(-np.abs(directions[:, 0]))[:30]
        report.add_table(
            "Estimated directions (loadings on the standardised predictors; largest |β₁| first, at most 30)",
            ["predictor", *[f"β{j + 1}" for j in range(k)]],
            [[names[i], *[float(directions[i, j]) for j in range(k)]] for i in order],
        )
    progress(0.5, "plotting")
    report.add_figure(
        "sufficient_plot.png",
        _plot(g, ds.y, ds.kind, f"{ds.name}: {method} principal machine"),
        caption="The first two sufficient predictors, coloured by the response.",
    )
    if evaluate:
        progress(0.6, "5-fold cross-validation")
        s_sdr, s_pca, s_all = cv_scores(ds, params, d)
        metric = "R²" if ds.kind == "continuous" else "accuracy"
        report.metrics.update({"cv_sdr": s_sdr, "cv_pca": s_pca, "cv_all": s_all})
        report.add_table(
            f"5-fold k-NN {metric}",
            ["predictors", metric],
            [[f"ĝ_1..ĝ_{d}", s_sdr], [f"first {d} principal components", s_pca], ["all of X", s_all]],
        )
    step = max(1, n // 2000)
    report.data = {
        "eigenvalues": [float(v) for v in vals[:50]],
        "d": d,
        "bic_order": est.bic_order_,
        "features": ds.feature_names,
        "directions": directions.tolist() if directions is not None else None,
        "predictors": g[::step, :2].tolist(),
        "y": [v.item() if hasattr(v, "item") else v for v in ds.y[::step]],
    }
    progress(1.0, "done")
    return report


def dataset_from(dataset: str | None, csv_sha256: str | None, response: str | None, digits_n: int = 0) -> Dataset:
    """A bundled dataset, or an uploaded CSV from the artifact store."""
    if csv_sha256:
        from core.artifacts import get_artifact_store

        try:
            data = get_artifact_store().read(csv_sha256)
        except (FileNotFoundError, KeyError):
            raise ValueError(f"no uploaded file {csv_sha256}") from None
        t = read_csv(data, response or "")
        return Dataset("the uploaded table", t.x, t.y, response_kind(t.y), t.features, [t.response])
    ds = load(dataset or "wine")
    if ds.name == "digits" and 0 < digits_n < len(ds.y):
        idx = np.sort(np.random.default_rng(0).choice(len(ds.y), digits_n, replace=False))
        ds = Dataset(ds.name, ds.x[idx], ds.y[idx], ds.kind, ds.feature_names, ds.target_names)
    return ds
