"""The ``nonlinear_sdr`` Report (``docs/results/nonlinear_sdr.md``) from finished studies.

:func:`build_report` takes what :mod:`methods.nonlinear_sdr.experiment` ran (per-replication results of
the main grid, the contamination study and the λ sweep; the §7 checks; the hinge-SVM regularisation
profile; the real datasets' per-fold scores) and builds the Report: the ``core.evidence`` headlines
first (t intervals over replications or folds, Wilson intervals for how often the order is found,
paired differences where the same data meet), then the tables and a Reading generated from the same
numbers. ``results.json`` holds every replication's and fold's values. Nothing here fits a model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.evidence import Evidence
from core.jobs import Report
from core.stats import mean_sd
from methods.nonlinear_sdr.order import bic_order
from methods.nonlinear_sdr.simulate import MODELS, NONLINEAR, chance_distance

LINEAR_ESTIMATORS = ("SIR", "SAVE", "DR", "pHd", "PSVM", "PM-ensemble")
C_SWEEP = (0.01, 0.1, 0.5, 1.0, 2.0)  # BIC constants shown beside the spec's c = 1 (psvmSDR's psdr_bic: 0.01)


# --- aggregation --------------------------------------------------------------------
def _stat(results: list[dict], est: str, key: str) -> tuple[float, float] | None:
    vals = [r[est][key] for r in results if est in r and key in r[est]]
    ms = mean_sd(vals, ddof=0)  # population sd over the replications
    return (ms.mean, ms.sd) if vals else None


def get_stat(results: list[dict], est: str, key: str) -> float | None:
    st = _stat(results, est, key)
    return None if st is None else st[0]


def _fmt(ms: tuple[float, float] | None) -> str:
    return "—" if ms is None else f"{ms[0]:.3f} ± {ms[1]:.3f}"


def _target_d(model: str, est: str, p: int) -> int:
    return 1 if est in NONLINEAR else MODELS[model].d_lin(p)


def _dhat_freq(results: list[dict], est: str, target: int) -> float | None:
    vals = [r[est]["dhat"] == target for r in results if est in r]
    return float(np.mean(vals)) if vals else None


def _main_tables(report: Report, settings: list[dict], results: list[list[dict]], estimators: list[str]) -> dict:
    lin = [e for e in estimators if e in LINEAR_ESTIMATORS]
    rows_d, rows_r, rows_k = [], [], []
    summary: dict[str, Any] = {}
    for s, res in zip(settings, results, strict=True):
        key = f"{s['model']} p={s['p']} n={s['n']}"
        d = MODELS[s["model"]].d_lin(s["p"])
        rows_d.append(
            [
                s["model"],
                s["p"],
                s["n"],
                *[_fmt(_stat(res, e, "dist")) for e in lin],
                f"{chance_distance(d, s['p']):.3f}",
            ]
        )
        rows_r.append([s["model"], s["p"], s["n"], *[_fmt(_stat(res, e, "rho")) for e in estimators]])
        ladle = [r["PSVM"]["dhat_ladle"] == d for r in res if "dhat_ladle" in r.get("PSVM", {})]
        rows_k.append(
            [
                s["model"],
                s["p"],
                s["n"],
                *[f"{_dhat_freq(res, e, _target_d(s['model'], e, s['p'])):.2f}" for e in estimators],
                f"{np.mean(ladle):.2f}" if ladle else "—",
            ]
        )
        summary[key] = {e: {k: _stat(res, e, k) for k in ("dist", "rho", "seconds")} for e in estimators}
        summary[key]["order"] = {
            **{e: _dhat_freq(res, e, _target_d(s["model"], e, s["p"])) for e in estimators},
            "PSVM ladle": float(np.mean(ladle)) if ladle else None,
        }
    report.add_table(
        "Subspace distance ‖P̂ − P‖_F of the first d_lin directions (mean ± sd over replications)",
        ["model", "p", "n", *lin, "chance √(2d−2d²/p)"],
        rows_d,
        note="Linear estimators only (the kernel and neural ones estimate functions, not a subspace). "
        "d_lin = 2 except C3 (d = 1). Lower is better; the last column is a random subspace.",
    )
    report.add_table(
        "|Spearman(ĝ₁(X_test), true predictor)| on 1,000 fresh points (mean ± sd)",
        ["model", "p", "n", *estimators],
        rows_r,
        note="True predictor: m(X) for M1/M2, r = X₁²+X₂² for M3/M4/C1, |X₁|+|X₂| for C2, X₁+X₂ for C3. "
        "Higher is better.",
    )
    report.add_table(
        "Order determination: share of replications with d̂ = target (BIC; last column PSVM with the ladle)",
        ["model", "p", "n", *estimators, "PSVM (ladle)"],
        rows_k,
        note="Target: d_lin (2; 1 for C3) for the linear estimators, 1 (one nonlinear predictor) for the kernel and "
        "neural ones. BIC-type criterion with c = 1; the ladle (Luo & Li 2016) bootstraps PSVM's directions.",
    )
    return summary


def _contamination_tables(report: Report, settings: list[dict], results: list[list[dict]]) -> dict:
    ests = list(dict.fromkeys(e for s in settings for e in s["estimators"]))
    lin = [e for e in ests if e in LINEAR_ESTIMATORS]
    rows_d, rows_r = [], []
    summary: dict[str, Any] = {}
    for s, res in zip(settings, results, strict=True):
        rows_d.append([s["model"], s["contamination"], *[_fmt(_stat(res, e, "dist")) for e in lin]])
        rows_r.append([s["model"], s["contamination"], *[_fmt(_stat(res, e, "rho")) for e in ests]])
        summary[f"{s['model']} eps={s['contamination']}"] = {
            e: {k: _stat(res, e, k) for k in ("dist", "rho")} for e in ests
        }
    n = settings[0]["n"] if settings else 0
    report.add_table(
        f"Contamination (n = {n}): ‖P̂ − P‖_F, linear estimators (mean ± sd)",
        ["model", "ε", *lin],
        rows_d,
        note="ε of the responses replaced by 100 × Cauchy draws (M-models) or moved to a random other class "
        "(C-models). SIR/DR slice by rank; pHd uses the values of Y.",
    )
    report.add_table(f"Contamination (n = {n}): |Spearman(ĝ₁, true predictor)|", ["model", "ε", *ests], rows_r)
    return summary


# --- tables of the λ sweep, the order constant, the checks and the real data ---------------------------------
def _ratio(results: list[dict], est: str) -> float | None:
    """Mean λ̂₂/λ̂₁ over replications."""
    vals = [r[est]["eig"][1] for r in results if est in r and len(r[est].get("eig", [])) > 1]
    return float(np.mean(vals)) if vals else None


def _dhat_at(r: dict, n: int, c: float) -> int:
    """The BIC order at constant ``c`` from one fit's eigenvalue ratios (the criterion is scale-free)."""
    eig = np.asarray(r["eig"], dtype=float)
    rank = int(np.sum(eig > 1e-12))
    return bic_order(eig, n, c, k_max=max(1, rank))


def _lam_table(report: Report, settings: list[dict], results: list[list[dict]], hinge: dict | None) -> dict:
    rows, out = [], {}
    prof = {lam: i for i, lam in enumerate(hinge["lam"])} if hinge else {}
    for s, res in zip(settings, results, strict=True):
        d = MODELS[s["model"]].d_lin(s["p"])
        share = _dhat_freq(res, "PSVM", d)
        ratio = _ratio(res, "PSVM")
        row = [
            s["model"],
            f"{s['lam']:g}",
            _fmt(_stat(res, "PSVM", "dist")),
            "—" if share is None else f"{share:.2f}",
            "—" if ratio is None else f"{ratio:.3f}",
            _fmt(_stat(res, "kernel PSVM", "rho")),
        ]
        i = prof.get(float(s["lam"])) if s["model"] == "M1" else None
        row += (
            ["—"] * 3
            if i is None
            else [f"{hinge['active'][i]:.2f}", f"{hinge['norm_per_lam'][i]:.4f}", f"{hinge['limit_cos'][i]:.5f}"]
        )
        rows.append(row)
        out[f"{s['model']} lam={s['lam']:g}"] = {"dist": get_stat(res, "PSVM", "dist"), "order": share, "ratio": ratio}
    n = settings[0]["n"] if settings else 0
    report.add_table(
        f"λ sweep (n = {n}, p = {settings[0]['p'] if settings else 0}): linear PSVM and the hinge SVMs behind it",
        [
            "model",
            "λ",
            "PSVM ‖P̂ − P‖",
            "BIC d̂ = 2 (c = 1)",
            "λ̂₂/λ̂₁",
            "kernel PSVM abs. Spearman",
            "active samples (M1)",
            "‖ŵ‖/λ (M1)",
            "cos(ŵ_λ, ŵ_λ→0) (M1)",
        ],
        rows,
        note="λ multiplies the mean loss: wᵀw + (λ/n)Σ L, i.e. scikit-learn's C = λ/(2n); the spec's λ is 1. "
        "active: share of samples with margin < 1 (their hinge is linear); ‖ŵ‖/λ and the cosine to the λ = 0.001 "
        "solution are constant / 1 in the fully regularised regime, where ŵ is a class-mean contrast over a fixed "
        "set of samples (mean over the 9 left-vs-right SVMs and the replications; M1 only).",
    )
    return out


def _order_table(report: Report, settings: list[dict], results: list[list[dict]]) -> dict:
    """Share of replications with d̂ = d_lin at several BIC constants c (PSVM, PM-ensemble, SIR; from the stored ratios)."""
    rows, out = [], {}
    ests = ("PSVM", "PM-ensemble", "SIR")
    for s, res in zip(settings, results, strict=True):
        if s["model"] not in ("M1", "M2", "C3"):
            continue
        d = MODELS[s["model"]].d_lin(s["p"])
        thr = np.log(s["n"]) / np.sqrt(s["n"])
        for e in ests:
            fits = [r[e] for r in res if e in r and "eig" in r[e]]
            if not fits:
                continue
            shares = [float(np.mean([_dhat_at(f, s["n"], c) == d for f in fits])) for c in C_SWEEP]
            ratio = float(np.mean([f["eig"][1] for f in fits if len(f["eig"]) > 1]))
            rows.append([s["model"], s["n"], d, e, f"{ratio:.3f}", f"{thr:.3f}", *[f"{x:.2f}" for x in shares]])
            out[f"{s['model']} n={s['n']} {e}"] = dict(zip(map(str, C_SWEEP), shares, strict=True))
    report.add_table(
        "Order determination vs the BIC constant c: share of replications with d̂ = d_lin",
        ["model", "n", "d_lin", "estimator", "mean λ̂₂/λ̂₁", "log n/√n", *[f"c = {c:g}" for c in C_SWEEP]],
        rows,
        note="G_n(k) = Σ_{i≤k} λ̂_i − c·λ̂₁·k·log n/√n (spec §3.4; c = 1 in this study, the spec allows 1–2): "
        "direction k is kept while λ̂_k/λ̂₁ > c·log n/√n. c = 0.01 is the default of the PSVM authors' R package "
        "(psvmSDR::psdr_bic). Recomputed from each fit's stored eigenvalue ratios.",
    )
    return out


def checks_table(report: Report, res: dict) -> list[bool]:
    psd, rate, chance = res["psd"], res["c3"], res["chance"]
    rows = [
        [
            "PSVM = SVC on Σ̂^{−1/2}-standardised X (cosine to the x-space primal solved by SLSQP)",
            res["svc_cosine"],
            "> 0.999",
            res["svc_cosine"] > 0.999,
        ],
        ["affine equivariance: ‖P̂(AX+b) − A^{−ᵀ}P̂(X)‖", res["affine"], "≈ 0", res["affine"] < 1e-4],
        ["Y → exp(Y): max |Δ eigenvalue|", res["monotone"], "0", res["monotone"] < 1e-12],
        ["M̂ symmetric (max |M̂ − M̂ᵀ|)", psd["asymmetry"], "0", psd["asymmetry"] < 1e-12],
        ["M̂ PSD (smallest eigenvalue)", psd["min_eigenvalue"], "≥ 0", psd["min_eigenvalue"] > -1e-10],
        [
            "eigenvectors orthonormal (max |VᵀV − I|)",
            psd["orthonormality_error"],
            "≈ 0",
            psd["orthonormality_error"] < 1e-10,
        ],
        [
            f"C3 error vs n, slope of log-log (n = {', '.join(map(str, rate['n']))})",
            rate["slope"],
            "≈ −0.5 (± 0.15)",
            abs(rate["slope"] + 0.5) < 0.15,
        ],
        [
            "shuffled Y (M1, n = 200): mean ‖P̂ − P‖",
            chance["mean_distance"],
            f"≈ {chance['chance']:.2f} (chance, ± 0.15)",
            abs(chance["mean_distance"] - chance["chance"]) < 0.15,
        ],
        ["linear kernel, b = p vs linear PSVM: ‖P̂ − P‖", res["kernel_linear"], "≈ 0", res["kernel_linear"] < 1e-3],
    ]
    holds = [bool(r[3]) for r in rows]
    for r in rows:
        r[3] = "holds" if r[3] else "fails"
    report.add_table(
        "Spec §7 checks",
        ["check", "measured", "expected", "verdict"],
        rows,
        note="Deterministic identities (exact up to round-off) and two rate checks whose tolerances (± 0.15) are far "
        "narrower than the effects they separate (a working PSVM on M1 is at 0.8, chance at 1.79). C3 mean "
        "distances: " + ", ".join(f"{v:.3f}" for v in rate["mean_distance"]),
    )
    return holds


def real_tables(report: Report, real: dict, meta: dict) -> None:
    for name, res in real.items():
        m = meta[name]
        metric = "R²" if m["kind"] == "continuous" else "accuracy"
        rows = [
            [
                est,
                f"{r['dhat']:.1f}" if "dhat" in r else "—",
                r.get("score_dhat", "—"),
                r.get("pca_dhat", "—"),
                f"{r['score_d2']:.3f} ± {r['sd_d2']:.3f}",
            ]
            for est, r in res.items()
        ]
        report.add_table(
            f"{name} (n = {m['n']}, p = {m['p']}): 5-fold k-NN {metric}",
            ["predictors", "mean BIC d̂", f"{metric} on ĝ₁..ĝ_d̂", f"{metric} on first d̂ PCs", f"{metric} at d = 2"],
            rows,
            note="'all of X' uses every predictor; the majority class / training mean is the no-information baseline.",
        )


# --- headlines (core.evidence) -------------------------------------------------------------------------------
def _per_est(results: list[dict]) -> dict[str, dict[str, list]]:
    """{estimator: {metric: [value per replication]}} in replication order."""
    out: dict[str, dict[str, list]] = {}
    for r in results:
        for est, row in r.items():
            for k, v in row.items():
                out.setdefault(est, {}).setdefault(k, []).append(v)
    return out


def raw_values(studies: dict[str, tuple[list[dict], list[list[dict]]]], real: dict, options: Any) -> dict:
    """results.json's raw values: every replication of every setting, every fold, and the 0/1 and paired series
    the headlines read."""
    raw: dict[str, Any] = {"main": {}, "contamination": {}, "lam": {}, "real": {}, "derived": {}}
    keyed: dict[str, dict[str, list[dict]]] = {"main": {}, "contamination": {}, "lam": {}}
    for study, (settings, results) in studies.items():
        for s, res in zip(settings, results, strict=True):
            if study == "main":
                key = f"{s['model']} p={s['p']} n={s['n']}"
            elif study == "contamination":
                key = f"{s['model']} eps={s['contamination']:g}"
            else:
                key = f"{s['model']} lam={s['lam']:g}"
            raw[study][key] = _per_est(res)
            keyed[study][key] = res
    p0, der = options.ps[0], raw["derived"]
    for m in ("M1", "M2"):
        runs = [r for n in options.ns for r in keyed["main"].get(f"{m} p={p0} n={n}", [])]
        if runs and "PSVM" in runs[0]:
            der[f"{m} PSVM BIC d=2"] = [float(r["PSVM"]["dhat"] == 2) for r in runs]
            der[f"{m} SIR BIC d=2"] = [float(r["SIR"]["dhat"] == 2) for r in runs if "SIR" in r]
            if "dhat_ladle" in runs[0]["PSVM"]:
                der[f"{m} PSVM ladle d=2"] = [float(r["PSVM"]["dhat_ladle"] == 2) for r in runs]
    nl = [
        float(r["kernel PSVM"]["dhat"] == 1)
        for m in ("M3", "M4", "C1")
        for n in options.ns
        for r in keyed["main"].get(f"{m} p={p0} n={n}", [])
        if "kernel PSVM" in r
    ]
    if nl:
        der["M3 M4 C1 kernel PSVM BIC d=1"] = nl
    eps = max([e for e in options.contamination if e > 0], default=None)
    for m in options.contamination_models:
        clean, dirty = keyed["contamination"].get(f"{m} eps=0"), keyed["contamination"].get(f"{m} eps={eps:g}")
        if clean and dirty:
            for est in ("PSVM", "pHd"):
                if est in clean[0] and "dist" in clean[0][est]:
                    der[f"{m} eps={eps:g} {est} increase"] = [
                        b[est]["dist"] - a[est]["dist"] for a, b in zip(clean, dirty, strict=True)
                    ]
    for name, res in real.items():
        raw["real"][name] = {
            est: {k: r["folds"][k] for k in ("score_dhat", "pca_dhat", "dhat")}
            for est, r in res.items()
            if "folds" in r and "score_dhat" in r["folds"]
        }
    return raw


def evidence(raw: dict, options: Any) -> Evidence:
    """One headline per claim of spec §7 (its acceptance targets; the paper itself could not be read offline)."""
    ev = Evidence(raw)
    p0, n_big, n_small = options.ps[0], max(options.ns), min(options.ns)
    chance = chance_distance(2, p0)
    main, der = raw["main"], raw["derived"]
    no_paper = "— (spec §7 target)"

    def mean_of(key: str, est: str, metric: str) -> float | None:
        v = main.get(key, {}).get(est, {}).get(metric)
        return float(np.mean(v)) if v else None

    for m in ("M1", "M2"):
        key = f"{m} p={p0} n={n_big}"
        if "PSVM" not in main.get(key, {}):
            continue
        sir = mean_of(key, "SIR", "dist")
        ev.headline(
            f"{m}: linear PSVM (λ = {options.lam:g}) ‖P̂ − P‖ ≤ 0.5 at n = {n_big}",
            stat="mean",
            a=f"main/{key}/PSVM/dist",
            null=0.5,
            direction="less",
            paper=no_paper,
            context=f"chance {chance:.2f}" + ("" if sir is None else f"; SIR {sir:.2f}"),
        )
        if "PM-ensemble" in main[key]:
            ev.headline(
                f"{m}: the loss ensemble beats the hinge alone (‖P̂ − P‖, n = {n_big})",
                stat="paired_diff",
                a=f"main/{key}/PM-ensemble/dist",
                b=f"main/{key}/PSVM/dist",
                direction="less",
                paper="ensemble over losses (the method)",
                context=f"PSVM {mean_of(key, 'PSVM', 'dist'):.2f}",
            )
    small = f"M1 p={p0} n={n_small}"
    if n_small < n_big and "PSVM" in main.get(small, {}):
        ev.headline(
            f"M1: PSVM's error falls with n ({n_small} → {n_big})",
            stat="diff",
            a=f"main/M1 p={p0} n={n_big}/PSVM/dist",
            b=f"main/{small}/PSVM/dist",
            direction="less",
            paper=no_paper,
            context=f"n = {n_small}: {mean_of(small, 'PSVM', 'dist'):.2f}",
        )
    for est in ("kernel PSVM", "neural PSVM"):
        for m in ("M3", "M4", "C1"):
            key = f"{m} p={p0} n={n_big}"
            if est not in main.get(key, {}):
                continue
            lin = max((mean_of(key, e, "rho") or 0.0) for e in ("PSVM", "SIR"))
            ev.headline(
                f"{m}: {est} |ρ(ĝ₁, truth)| > 0.9 at n = {n_big}",
                stat="mean",
                a=f"main/{key}/{est}/rho",
                null=0.9,
                direction="greater",
                paper=no_paper,
                context=f"linear PSVM / SIR ≤ {lin:.2f}",
                digits=3,
            )
    key = f"M4 p={p0} n={n_big}"
    if "SIR" in main.get(key, {}):
        ev.headline(
            "M4: SIR fails on the symmetric model (|ρ| < 0.1)",
            stat="mean",
            a=f"main/{key}/SIR/rho",
            null=0.1,
            direction="less",
            paper="E[X | Y] ≈ 0: first-moment methods fail (spec §6)",
            context=f"kernel PSVM {mean_of(key, 'kernel PSVM', 'rho') or float('nan'):.2f}",
            digits=3,
        )
    for m in ("M1", "M2"):
        a = f"{m} PSVM BIC d=2"
        if a in der:
            sir = der.get(f"{m} SIR BIC d=2")
            ev.headline(
                f"{m}: BIC (c = 1) finds d = 2 for PSVM in most replications (n ∈ {list(options.ns)})",
                stat="proportion",
                a=f"derived/{a}",
                null=0.5,
                paper=no_paper,
                context=("" if not sir else f"SIR {np.mean(sir):.0%}; ") + "see the c sweep",
            )
        a = f"{m} PSVM ladle d=2"
        if a in der:
            ev.headline(
                f"{m}: the ladle finds d = 2 for PSVM in most replications",
                stat="proportion",
                a=f"derived/{a}",
                null=0.5,
                paper="ladle (spec §3.4 alternative)",
                context=f"{options.ladle_boot} bootstraps",
            )
    if "M3 M4 C1 kernel PSVM BIC d=1" in der:
        ev.headline(
            "M3/M4/C1: BIC finds d = 1 (one nonlinear predictor) for kernel PSVM in most replications",
            stat="proportion",
            a="derived/M3 M4 C1 kernel PSVM BIC d=1",
            null=0.5,
            paper=no_paper,
            context="pooled over models and n",
        )
    for m in options.contamination_models:
        eps = max([e for e in options.contamination if e > 0], default=None)
        a, b = f"{m} eps={eps:g} PSVM increase", f"{m} eps={eps:g} pHd increase"
        if a in der and b in der:
            ev.headline(
                f"{m}, ε = {eps:g} gross Y-errors: PSVM's error grows less than pHd's",
                stat="paired_diff",
                a=f"derived/{a}",
                b=f"derived/{b}",
                direction="less",
                paper="robust: Y enters only through ±1 labels (spec §3.3)",
                context=f"increase: PSVM {np.mean(der[a]):+.2f}, pHd {np.mean(der[b]):+.2f}",
            )
    lam = raw["lam"]
    base, loose = lam.get("M1 lam=1", {}).get("PSVM"), lam.get("M1 lam=100", {}).get("PSVM")
    if base and loose:
        ev.headline(
            "M1: λ = 100 (less regularised) vs the spec's λ = 1, PSVM ‖P̂ − P‖",
            stat="paired_diff",
            a="lam/M1 lam=100/PSVM/dist",
            b="lam/M1 lam=1/PSVM/dist",
            direction="less",
            paper="— (spec: λ = 1, sweep {0.1, 1, 10})",
            context=f"λ = 1: {np.mean(base['dist']):.2f}",
        )
    for name in ("diabetes", "breast_cancer", "wine"):
        for est in ("PSVM", "kernel PSVM"):
            folds = raw["real"].get(name, {}).get(est)
            if not folds:
                continue
            ev.headline(
                f"{name}: k-NN on {est}'s ĝ₁..ĝ_d̂ ≥ on as many principal components",
                stat="paired_diff",
                a=f"real/{name}/{est}/score_dhat",
                b=f"real/{name}/{est}/pca_dhat",
                direction="greater",
                paper="match or beat PCA (spec §7)",
                context=f"mean d̂ {np.mean(folds['dhat']):.1f}; PCs {np.mean(folds['pca_dhat']):.3f}",
                unit="R²" if name == "diabetes" else "acc.",
                digits=3,
            )
    return ev


def _est(h: Any) -> str:
    r = h.result
    sign = "+" if h.stat in ("paired_diff", "diff") else ""
    lo = (
        ""
        if r.get("low") is None or r.get("n", 0) < 2
        else f" [{r['low']:{sign}.{h.digits}f}, {r['high']:{sign}.{h.digits}f}]"
    )
    return f"{r['estimate']:{sign}.{h.digits}f}{lo}"


def _reading(ev: Evidence, lam: dict, order: dict, hinge: dict | None, holds: list[bool], options: Any) -> str:
    """Plain paragraphs from the measured numbers: the verdicts, then why λ and c behave as they do."""
    counts = ev.counts()
    by = {v: [h for h in ev.headlines if h.result["verdict"] == v] for v in ("holds", "fails", "not resolved")}
    paras = [
        f"Of {len(ev.headlines)} headline claims {counts['holds']} hold, {counts['fails']} fail and "
        f"{counts['not resolved']} are not resolved (95 % intervals: t over {options.reps} replications or 5 folds, "
        "Wilson for how often the order is found; the baseline of each is in the table)."
    ]
    for v, label in (("holds", "Holds"), ("fails", "Fails"), ("not resolved", "Not resolved")):
        if by[v]:
            paras.append(f"**{label}.** " + "; ".join(f"{h.claim} ({_est(h)})" for h in by[v]) + ".")
    m1 = {k.split("=")[1]: v for k, v in lam.items() if k.startswith("M1 ")}
    if hinge and "0.1" in m1 and "1" in m1:
        i1 = hinge["lam"].index(1.0) if 1.0 in hinge["lam"] else 0
        il = len(hinge["lam"]) - 1
        paras.append(
            f"**λ (spec: λ = 1).** PSVM's ‖P̂ − P‖ on M1 is {m1['0.1']['dist']:.3f} at λ = 0.1 and {m1['1']['dist']:.3f} "
            f"at λ = 1: at these λ every left-vs-right SVM is fully regularised. ‖ŵ‖/λ is the same "
            f"({hinge['norm_per_lam'][0]:.4f} and {hinge['norm_per_lam'][i1]:.4f}) and ŵ points where it does as λ → 0 "
            f"(cosine {hinge['limit_cos'][i1]:.5f}): the offset alone decides which samples sit on the hinge "
            f"({hinge['active'][i1]:.0%} of them), and ŵ = (λ/2n)Σ s_i y_i φ_i over those samples is a class-mean "
            "contrast whose direction does not depend on λ. So at the spec's λ, 'PSVM' is a weighted slice-mean "
            f"contrast, not a margin maximiser. Less regularised, at λ = {hinge['lam'][il]:g}, ‖ŵ‖/λ falls to "
            f"{hinge['norm_per_lam'][il]:.4f}, {hinge['active'][il]:.0%} of the samples stay on the hinge, and the "
            "distance falls: "
            + ", ".join(f"λ = {k}: {v['dist']:.3f}" for k, v in m1.items() if v["dist"] is not None)
            + "."
        )
    n_big = max(options.ns)
    row = order.get(f"M1 n={n_big} PSVM")
    sir = order.get(f"M1 n={n_big} SIR")
    if row:
        thr = np.log(n_big) / np.sqrt(n_big)
        ratio = m1.get("1", {}).get("ratio")
        text = (
            f"**Order (spec §3.4).** The code is the spec's rule: G_n(k) = Σ_{{i≤k}} λ̂_i − c·λ̂₁·k·log n/√n, d̂ its "
            f"argmax (a test pins it). It keeps direction k while λ̂_k/λ̂₁ > c·log n/√n = {thr:.3f}·c at n = {n_big}. "
        )
        if ratio is not None:
            text += f"PSVM's λ̂₂/λ̂₁ on M1 at λ = 1 is {ratio:.3f} "
        text += (
            "(the left-vs-right contrasts all share X₁'s direction; X₂ enters them weakly and with changing sign), "
            "far below that threshold for the spec's c ∈ [1, 2], so BIC finds d = 2 in "
            f"{row['1.0']:.0%} of the M1 replications at c = 1: a property of the criterion's constant at this λ, "
            "not a defect of the code"
        )
        if sir:
            text += f" (SIR's slice means give a larger ratio: {sir['1.0']:.0%} at c = 1)"
        text += (
            f". Across c (M1, n = {n_big}, PSVM): "
            + ", ".join(f"c = {c}: {v:.0%}" for c, v in row.items())
            + "; the PSVM authors' R package defaults to c = 0.01, which on these fits over-shoots d when λ is "
            "large. The ladle (bootstrap) estimator needs no constant (see its headline)."
        )
        paras.append(text)
    paras.append(
        f"**§7 checks.** {sum(holds)} of {len(holds)} hold (identities to round-off; the C3 rate and the shuffled-Y "
        "chance level within ± 0.15)."
    )
    paras.append(
        "The ICML 2025 paper could not be obtained offline (spec §2), so no paper number stands beside ours; the "
        "comparisons are with the classical estimators, the chance baselines and the spec's acceptance targets."
    )
    return "\n\n".join(paras)


# --- the Report -----------------------------------------------------------------------------------------------
def build_report(
    options: Any,
    studies: dict[str, tuple[list[dict], list[list[dict]]]],
    chk: dict,
    hinge: dict | None,
    real: dict,
    meta: dict,
    figure: Any,
    *,
    seconds: float,
    device: Any = "cpu",
) -> Report:
    """The reproduction's Report from its studies: headlines, tables, Reading, ``results.json``."""
    from core.device import device_provenance
    from core.provenance import provenance_line

    est = list(options.estimators)
    report = Report(title="Nonlinear SDR: principal SVM ensembles (linear, kernel, neural)")
    main_s, main_r = studies["main"]
    summary_main = _main_tables(report, main_s, main_r, est)
    cont_s, cont_r = studies.get("contamination", ([], []))
    summary_cont = _contamination_tables(report, cont_s, cont_r) if cont_s else {}
    lam_s, lam_r = studies.get("lam", ([], []))
    lam = _lam_table(report, lam_s, lam_r, hinge) if lam_s else {}
    order = _order_table(report, main_s, main_r)
    holds = checks_table(report, chk)
    real_tables(report, real, meta)
    if figure is not None:
        report.add_figure(
            "sufficient_plots.png",
            figure,
            caption="(ĝ₁, ĝ₂) of each dataset (full data), PCA for reference; colour = response.",
        )
    raw = raw_values(studies, real, options)
    ev = evidence(raw, options)
    scale = (
        f"{len(options.models)} models × p ∈ {options.ps} × n ∈ {options.ns}, {options.reps} replications "
        f"each (spec: p ∈ {{10, 20}}, n ∈ {{100, 200, 500}}, 100 replications)"
    )
    n = ev.counts()
    report.summary = (
        f"Preset `{options.preset}`: {scale}; contamination ε ∈ {options.contamination} on "
        f"{', '.join(options.contamination_models)} at n = {options.contamination_n}; λ sweep {options.lam_sweep}; "
        f"{', '.join(options.datasets) or 'no'} real datasets"
        f"{f' (digits: {options.digits_n} rows)' if options.digits_n and 'digits' in options.datasets else ''}. "
        f"Headline claims: {n['holds']} hold, {n['fails']} fail, {n['not resolved']} not resolved. "
        f"{seconds / 60:.1f} min. {provenance_line()}"
    )
    report.add_section(
        "Setup",
        "Command: `paperworks reproduce nonlinear_sdr" + options.cli_options() + "`. "
        f"Replication seeds {options.seed}..{options.seed + options.reps - 1}; λ = {options.lam} (the spec's); H = 10 "
        "slices (9 left-vs-right problems; one-vs-rest for C2; 9 class weights for binary responses); kernel PSVM: "
        "Gaussian kernel, γ = 1/median squared distance, b = ⌊n/3⌋; neural PSVM: 2×64 tanh trunk, one head per "
        f"problem, {options.neural_steps} full-batch AdamW steps (lr 1e-2, weight decay 1e-4); PM-ensemble = hinge + "
        "logistic + squared hinge + least squares, each candidate matrix scaled to unit trace. d̂ by the BIC-type "
        f"criterion (c = 1); PSVM's order also by the ladle estimator ({options.ladle_boot} bootstraps).\n\n"
        "**Paper numbers.** The ICML 2025 paper could not be obtained offline (spec §2, §4), so no paper number is "
        "quoted beside ours; the comparisons are with the classical estimators (SIR, SAVE, DR, pHd) implemented "
        "here, with the chance baselines, and with the spec's acceptance targets (§7).\n\n"
        "**Shrunk.** "
        + (
            "Nothing: this is the spec's scale."
            if options.preset == "full"
            else f"Replications ({options.reps} instead of 100) and the grid ({scale}); estimators run: "
            f"{', '.join(options.estimators)}; `-o preset=full` runs the spec's scale."
        ),
    )
    report.add_section("Reading", _reading(ev, lam, order, hinge, holds, options))
    report.sections.insert(0, ev.section())
    report.data = {
        "main": summary_main,
        "contamination": summary_cont,
        "lam": lam,
        "order": order,
        "hinge": hinge,
        "checks": {**chk, "holds": holds},
        "real": real,
        "options": options.model_dump(),
        "seconds": seconds,
    }
    report.add_json(
        "results.json",
        ev.to_json(
            options=options.model_dump(),
            seconds=seconds,
            provenance=provenance_line(),
            checks={**chk, "holds": holds},
            hinge=hinge,
            order=order,
        ),
        caption="every replication's and fold's values and the headline specifications (core.evidence)",
    )
    report.metrics.update(device_provenance(device, options.amp))
    return report
