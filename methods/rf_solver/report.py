"""RF-Solver Reports: the jobs' (one edit, one reconstruction) and the two reproductions' (``rf_solver``,
``rf_solver_ablation``), built from the studies' results and nothing else (the runs are in
:mod:`methods.rf_solver.experiment`). Each reproduction opens with its headline claims, computed by
:mod:`core.evidence` from the per-item values (each image's MSE and target hit, each sample's observed
order), which go to ``results.json`` with them.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from core.evidence import Evidence
from core.jobs import Report, Table
from core.stats import bootstrap_ci, wilson
from methods.rf_solver import plots
from methods.rf_solver.data import tensor_to_uint8
from methods.rf_solver.results import (
    ABLATION_BLOCKS,
    ABLATION_CFG,
    ABLATION_KEYS,
    AblationResult,
    AnalyticResult,
    ReconRow,
    TradeoffResult,
)

log = logging.getLogger(__name__)

SPEC_TABLE = {  # spec §6.1, measured by the spec's author in numpy (not the paper's numbers)
    ("gauss", 16): (0.355, 1.8e-3),
    ("gauss", 64): (0.092, 2.8e-5),
    ("mog", 16): (0.178, 2.5e-2),
    ("mog", 64): (0.047, 1.0e-3),
    ("mog", 256): (0.012, 5.8e-5),
}


def _table(title: str, columns: list[str], rows: list[list[Any]], note: str = "") -> str:
    return Table(title=title, columns=columns, rows=rows, note=note).to_markdown()


def _analytic_markdown(res: AnalyticResult) -> str:
    rows = []
    for name in ("gauss", "mog"):
        eul, rf2, rf3 = ({p.nfe: p.error for p in res.curves[name][o]} for o in (1, 2, 3))
        for nfe in (16, 24, 48, 64, 96, 256):
            spec = SPEC_TABLE.get((name, nfe), ("", ""))
            rows.append([name, nfe, eul[nfe], rf2[nfe], rf3.get(nfe, ""), eul[nfe] / rf2[nfe], spec[0], spec[1]])
    return "\n\n".join(
        [
            "Max |inversion endpoint − exact| over 2,000 Gaussian samples (m = 2, s = 0.5) and 500 mixture samples "
            "(RK4 reference), linear grid unless noted. RF-Solver-3 is the optional order-3 Taylor step.",
            _table(
                "Inversion error at equal NFE (Euler 2N steps, RF-Solver-2 N steps, RF-Solver-3 2N/3 steps)",
                [
                    "flow",
                    "NFE",
                    "Euler",
                    "RF-Solver-2",
                    "RF-Solver-3",
                    "Euler / RF-Solver-2",
                    "spec §6.1 Euler",
                    "spec §6.1 RF-Solver-2",
                ],
                rows,
                note="The spec §6.1 columns were measured by the spec's author (numpy, 1-D, their own mixture); the "
                "paper's tables were not available offline, so no paper number is quoted.",
            ),
            _table(
                "Observed order (−slope of log error vs log NFE; Gaussians NFE 16–256, mixture NFE 32–256)",
                ["flow", "Euler", "RF-Solver-2", "RF-Solver-3"],
                [[n, s[1], s[2], s[3]] for n, s in res.slopes.items()],
            ),
            _table(
                "Round trip on the mixture (invert then sample, max |x − x̂|)",
                ["NFE per direction", "Euler", "RF-Solver-2"],
                [[r["nfe_per_direction"], r["euler"], r["rf_solver2"]] for r in res.round_trips],
            ),
            "![error vs NFE](artifact:error_vs_nfe.png)",
        ]
    )


def _checks(res: AnalyticResult, recon: list[ReconRow], inj: dict[int, float], tr: TradeoffResult) -> list[list]:
    """The spec §7 checks that need an experiment, with the measured value and pass/fail."""
    g = res.curves["gauss"]
    eul = {p.nfe: p.error for p in g[1]}
    ratio = min(eul[p.nfe] / p.error for p in g[2] if p.nfe >= 8)
    rt32 = next(r for r in res.round_trips if r["nfe_per_direction"] == 32)
    rows = [
        ["§7.3 Gaussian Euler order ∈ 1 ± 0.15", res.slopes["gauss"][1], abs(res.slopes["gauss"][1] - 1) <= 0.15],
        ["§7.3 Gaussian RF-Solver-2 order ≥ 1.8", res.slopes["gauss"][2], res.slopes["gauss"][2] >= 1.8],
        ["§7.3 min Euler/RF-Solver-2 error ratio, NFE ≥ 8 (> 10)", ratio, ratio > 10],
        ["§7.4 mixture RF-Solver-2 order ∈ 2 ± 0.25", res.slopes["mog"][2], abs(res.slopes["mog"][2] - 2) <= 0.25],
        ["§7.4 round trip NFE 32, RF-Solver-2 (< 0.01)", rt32["rf_solver2"], rt32["rf_solver2"] < 0.01],
        ["§7.4 round trip NFE 32, Euler (> 0.1)", rt32["euler"], rt32["euler"] > 0.1],
    ]
    for r2 in (r for r in recon if r.solver == "RF-Solver-2"):
        e = next(r for r in recon if r.dataset == r2.dataset and r.solver == "Euler (equal NFE)" and r.nfe == r2.nfe)
        rows.append(
            [f"§7.6 {r2.dataset}, N={r2.steps}: RF-Solver-2 MSE < Euler MSE ({e.mse:.3g})", r2.mse, r2.mse < e.mse]
        )
    n = max(inj)
    rows.append([f"§7.6 same label: MSE with k = N = {n} ≤ k = 0 ({inj[0]:.3g})", inj[n], inj[n] <= inj[0]])
    rows.append(
        [
            f"§7.8 MSE to source falls as k grows (Spearman ρ over k; violations of strict descent: "
            f"{tr.monotone_violations()})",
            tr.spearman(),
            tr.spearman() < 0,
        ]
    )
    rows.append(
        [
            f"§7.8 target accuracy k = 0 > k = N ({tr.target_acc[-1]:.2f})",
            tr.target_acc[0],
            tr.target_acc[0] > tr.target_acc[-1],
        ]
    )
    return [[name, value, "pass" if ok else "FAIL"] for name, value, ok in rows]


def _ci(lo_hi: tuple[float, float], digits: int = 3) -> str:
    return f"[{lo_hi[0]:.{digits}g}, {lo_hi[1]:.{digits}g}]"


KEY_NAMES = {"interval": "interval upper time (spec)", "eval": "evaluation time"}
BLOCK_NAMES = {"all": "all single blocks (spec)", "later_half": "later half (FLUX)"}


def _ablation_markdown(ab: AblationResult, k0_pass: float = 0.8) -> tuple[str, dict[str, Any]]:
    """The grid's tables (per cell, factor effects, same-label reconstruction) and a few summary numbers."""
    rows = ab.cell_rows()
    n, kn = ab.num_images, max(ab.ks)
    by = {(r["keys"], r["cfg"], r["blocks"], r["k"]): r for r in rows}
    cell_rows = []
    for keys, cfg, blocks in ab.cells():
        r0, rn = by[(keys, cfg, blocks, 0)], by[(keys, cfg, blocks, kn)]
        mid = [by[(keys, cfg, blocks, k)] for k in ab.ks if 0 < k < kn]
        cell_rows.append(
            [
                KEY_NAMES[keys],
                cfg,
                BLOCK_NAMES[blocks],
                f"{r0['target_acc']:.2f} {_ci(r0['target_acc_ci'], 2)}",
                " / ".join(f"{m['target_acc']:.2f}" for m in mid),
                f"{rn['target_acc']:.2f} {_ci(rn['target_acc_ci'], 2)}",
                f"{r0['mse']:.4g}",
                " / ".join(f"{m['mse']:.4g}" for m in mid),
                f"{rn['mse']:.4g}",
                f"{rn['d_mse']:+.3g} {_ci(rn['d_mse_ci'])}",
            ]
        )
    mid_ks = ", ".join(str(k) for k in ab.ks if 0 < k < kn)
    cells = _table(
        f"RF-Edit grid: {n} held-out digits, each edited to a random other digit (N = {ab.num_steps}, RF-Solver-2, "
        f"guidance {ab.guidance} unless the CFG column says 1)",
        [
            "V keys",
            "CFG handling",
            "blocks",
            "target acc k = 0 [95% CI]",
            f"target acc k = {mid_ks}",
            f"target acc k = {kn} [95% CI]",
            "MSE k = 0",
            f"MSE k = {mid_ks}",
            f"MSE k = {kn}",
            f"Δ MSE k = {kn} − k = 0 [95% CI]",
        ],
        cell_rows,
        note="Accuracy CIs: Wilson; Δ MSE: paired percentile bootstrap over the edited images (2,000 resamples). "
        f"Blocks: all = {ab.blocks['all']}, later half = {ab.blocks['later_half']}. k = 0 injects nothing, so it "
        "depends only on the guidance.",
    )
    eff_rows = []
    for k in [k for k in ab.ks if k > 0]:
        for e in ab.factor_effects(k):
            eff_rows.append(
                [
                    k,
                    e["factor"],
                    f"{e['level']} − {e['vs']}",
                    "target acc" if e["metric"] == "acc" else "MSE to source",
                    e["effect"],
                    _ci(e["ci"]),
                    "yes" if e["ci"][0] > 0 or e["ci"][1] < 0 else "no",
                ]
            )
    effects = _table(
        "Factor effects on the change from k = 0 (main effects, averaged over the other factors' levels)",
        ["k", "factor", "contrast", "metric", "effect", "95% CI (paired bootstrap)", "CI excludes 0"],
        eff_rows,
        note="Effect = (metric at k − metric at k = 0) at the named level minus the same at the spec's level, "
        "per image, averaged over the cells of the other two factors. Negative MSE effects mean that level "
        "preserves the source more as k grows; negative accuracy effects mean injection suppresses the edit more.",
    )
    rec_rows = []
    rk = max(ab.recon_ks)
    for keys in ABLATION_KEYS:
        for blocks in ABLATION_BLOCKS:
            m0, mk = ab.recon[(keys, blocks, 0)], ab.recon[(keys, blocks, rk)]
            d = mk - m0
            ci = bootstrap_ci(d).bounds
            rec_rows.append(
                [
                    KEY_NAMES[keys],
                    BLOCK_NAMES[blocks],
                    float(m0.mean()),
                    float(mk.mean()),
                    float(d.mean()),
                    _ci(ci),
                    "pass" if float(d.mean()) <= 0 else "FAIL",
                ]
            )
    recon = _table(
        f"Same label, guidance 1 (§7.6): reconstruction MSE with k = N = {rk} vs k = 0, per V keys × blocks",
        ["V keys", "blocks", "MSE k = 0", f"MSE k = {rk}", "Δ [mean]", "95% CI", "§7.6 (k = N ≤ k = 0)"],
        rec_rows,
        note="At guidance 1 there is one batch half, so the CFG factor does not apply.",
    )
    summary = {
        "k0_target_acc": by[(ABLATION_KEYS[0], ABLATION_CFG[0][0], ABLATION_BLOCKS[0], 0)]["target_acc"],
        "k0_pass": k0_pass,
        "rows": rows,
    }
    return "\n\n".join([cells, effects, recon, "![ablation](artifact:ablation.png)"]), summary


def _reading(ev: Evidence, inj: dict[int, float], tr: TradeoffResult, ab: AblationResult | None) -> str:
    """A plain-words paragraph: what holds, what does not, what would change the conclusion (from the verdicts)."""
    n = max(inj)
    solver = [h for h in ev.headlines if h.claim.startswith("RF-Solver-2")]
    held = [h for h in solver if h.result["verdict"] == "holds"]
    parts = [
        f"The solver headlines: {len(held)} of {len(solver)} hold ("
        + "; ".join(f"{h.claim}: {h.result['verdict']}" for h in solver)
        + "). The spec's tolerance checks on the analytic flows (table below) agree: RF-Solver-2's observed order is "
        "about 2 on the mixture (3 on the affine Gaussian field) and its round trips are far tighter than Euler's.",
    ]
    k0 = tr.target_acc[0]
    lo, hi = wilson(round(k0 * tr.num_images), tr.num_images)
    parts.append(
        f"For editing, the spec's configuration (N = {tr.num_steps}, guidance {tr.guidance}) reaches the target "
        f"label in {k0:.0%} of k = 0 edits (95% CI {lo:.0%}–{hi:.0%}; the issue asks for ≥ 80% before the trade-off "
        f"is judged) and {tr.target_acc[-1]:.0%} at k = N; MSE to the source "
        + (
            "falls as k grows, as the paper says."
            if tr.spearman() < 0
            else f"rises with k (Spearman ρ = {tr.spearman():.2f}), the opposite of the paper's trade-off."
        )
    )
    if inj[n] > inj[0]:
        parts.append(
            f"Same-label reconstruction with V injected at every step (k = N = {n}) is worse than without "
            f"({inj[n]:.2g} vs {inj[0]:.2g})."
        )
    if ab is None:
        parts.append(
            "Which factor of RF-Edit carries these effects is measured separately by `paperworks reproduce "
            "rf_solver_ablation` (docs/results/rf_solver_ablation.md)."
        )
    else:
        kn = max(ab.ks)
        eff = [e for e in ab.factor_effects(kn) if e["metric"] == "mse"]
        sig = [e for e in eff if e["ci"][0] > 0 or e["ci"][1] < 0]
        big = max(eff, key=lambda e: abs(e["effect"]))
        rec = {
            (kk, b): float((ab.recon[(kk, b, max(ab.recon_ks))] - ab.recon[(kk, b, 0)]).mean())
            for kk in ABLATION_KEYS
            for b in ABLATION_BLOCKS
        }
        parts.append(
            f"The ablation grid ({ab.num_images} edits per cell) attributes the k = {kn} change in MSE to the source "
            f"mostly to {big['factor']} ({big['level']} vs {big['vs']}: {big['effect']:+.4f}, 95% CI "
            f"{_ci(big['ci'])}); "
            + (
                "factors whose CI excludes zero: "
                + ", ".join(f"{e['factor']} = {e['level']} ({e['effect']:+.4f})" for e in sig)
                + "."
                if sig
                else "no factor's effect has a CI that excludes zero."
            )
        )
        ok_cells = [c for c in ab.cells() if ab.mses[(*c, kn)].mean() < ab.mses[(*c, 0)].mean()]
        parts.append(
            f"{len(ok_cells)} of {len(ab.cells())} cells show the paper's direction (MSE at k = {kn} below k = 0)"
            + (": " + "; ".join(f"{c[0]}/{c[1]}/{c[2]}" for c in ok_cells) + "." if ok_cells else ".")
        )
        parts.append(
            "Same-label reconstruction at k = N minus k = 0: "
            + ", ".join(f"keys {kk}, blocks {b}: {v:+.2g}" for (kk, b), v in rec.items())
            + " (positive = injection hurts)."
        )
    parts.append(
        "What would change the conclusion: this is a ~1M-parameter DiT whose 'prompt' is one label token, trained "
        "for minutes; the label also reaches the early blocks through the modulation vector, which V sharing cannot "
        "touch. With a text-conditioned model in which the late single-stream blocks carry the layout (FLUX)"
        + (
            ", or a model strong enough that k = 0 edits land on the target (this one misses the issue's 80% bar)"
            if k0 < 0.8
            else ""
        )
        + ", the direction could differ; a cell whose CI excludes zero on more images or seeds would settle the "
        "factors that stay ambiguous here."
    )
    return " ".join(parts)


def _ablation_reading(ab: AblationResult, train_steps: int) -> str:
    """Plain words for the grid alone: what holds, what does not, what would change the conclusion."""
    kn = max(ab.ks)
    spec = (ABLATION_KEYS[0], ABLATION_CFG[0][0], ABLATION_BLOCKS[0])
    h0, hn = ab.hits[(*spec, 0)], ab.hits[(*spec, kn)]
    m0, mn = ab.mses[(*spec, 0)], ab.mses[(*spec, kn)]
    lo, hi = wilson(int(h0.sum()), len(h0))
    d_ci = bootstrap_ci(mn - m0).bounds
    parts = [
        f"In the spec's configuration (interval keys, V into both guidance halves, all single-stream blocks; "
        f"N = {ab.num_steps}, guidance {ab.guidance}) k = 0 edits reach the target digit in {h0.mean():.0%} of "
        f"{len(h0)} cases (95% CI {lo:.0%}–{hi:.0%}), "
        + ("meeting" if lo >= 0.8 else "short of" if hi < 0.8 else "not clearly meeting")
        + f" the issue's 80% bar, and {hn.mean():.0%} at k = {kn}. Injecting V for all {kn} steps changes the MSE "
        f"to the source by {float((mn - m0).mean()):+.4f} (95% CI {_ci(d_ci)}): "
        + (
            "structure is preserved more, the paper's direction."
            if d_ci[1] < 0
            else "structure is preserved less, the opposite of the paper's trade-off."
            if d_ci[0] > 0
            else "not distinguishable from no change."
        )
    ]
    for metric, word in (("mse", "MSE to the source"), ("acc", "target accuracy")):
        eff = [e for e in ab.factor_effects(kn) if e["metric"] == metric]
        sig = [e for e in eff if e["ci"][0] > 0 or e["ci"][1] < 0]
        big = max(eff, key=lambda e: abs(e["effect"]))
        parts.append(
            f"On the k = {kn} change in {word}, the largest main effect is {big['factor']} "
            f"({big['level']} vs {big['vs']}: {big['effect']:+.4f}, 95% CI {_ci(big['ci'])})"
            + (
                "; effects whose CI excludes zero: "
                + ", ".join(f"{e['factor']} = {e['level']} ({e['effect']:+.4f})" for e in sig)
                + "."
                if sig
                else "; no effect's CI excludes zero."
            )
        )
    d_cis = {c: bootstrap_ci(ab.mses[(*c, kn)] - ab.mses[(*c, 0)]).bounds for c in ab.cells()}
    ok = [c for c, ci in d_cis.items() if ci[1] < 0]
    up = [c for c, ci in d_cis.items() if ci[0] > 0]
    parts.append(
        f"Across the grid, {len(ok)} of {len(ab.cells())} cells show the paper's direction (MSE at k = {kn} below "
        f"k = 0 with a CI that excludes zero)"
        + (" (" + "; ".join("/".join(c) for c in ok) + ")" if ok else "")
        + f" and {len(up)} show the opposite"
        + (
            ": no level of any factor turns the trade-off the paper's way; the factors only change how much "
            "the injected V moves the edit away from the source."
            if not ok and len(up) == len(ab.cells())
            else "."
        )
    )
    rk = max(ab.recon_ks)
    rec = {
        (kk, b): (float((ab.recon[(kk, b, rk)] - ab.recon[(kk, b, 0)]).mean()), float(ab.recon[(kk, b, 0)].mean()))
        for kk in ABLATION_KEYS
        for b in ABLATION_BLOCKS
    }
    parts.append(
        f"Same-label reconstruction (§7.6) with V injected at all {rk} steps vs none, change in MSE: "
        + ", ".join(f"{kk} keys/{b} blocks {d:+.2g}" for (kk, b), (d, _) in rec.items())
        + f" (no injection: {rec[(ABLATION_KEYS[0], ABLATION_BLOCKS[0])][1]:.2g})."
    )
    d_int, d_eval = rec[("interval", "all")][0], rec[("eval", "all")][0]
    if d_int > 0 and abs(d_eval) < d_int / 10:
        parts.append(
            f"That loss is carried by the V keys: keyed by the interval's upper time (spec §3.5), each main "
            "evaluation receives V computed one interval lower on the inversion path; keyed by the time it was "
            f"evaluated at, the loss shrinks {d_int / max(abs(d_eval), 1e-12):.0f}-fold with all blocks sharing, "
            "so the §7.6 failure is the keying, not V sharing as such."
        )
    if h0.mean() < 0.8:
        parts.append(
            f"The issue's precondition is not met: this model ({train_steps} training steps) lands k = 0 edits "
            f"on the target in {h0.mean():.0%} of cases, not ≥ 80%, so the grid ranks the factors on a model "
            "that misses the target in "
            + ("most" if h0.mean() < 0.5 else "a good share")
            + " of the edits even without injection."
        )
    else:
        parts.append(
            f"The issue's precondition holds: this model ({train_steps} training steps) lands k = 0 edits on the "
            f"target in {h0.mean():.0%} of cases, so the factors are ranked on a model that can edit."
        )
    parts.append(
        "What would change the conclusion: the digits model is ~1M parameters trained for minutes on 8×8 digits, "
        "its 'prompt' is one label token, and the label also reaches the early blocks through the modulation "
        "vector, which V sharing cannot touch. A model whose late single-stream blocks carry the layout from a "
        "text prompt (FLUX), "
        + ("a stronger model whose k = 0 edits land on the target, " if h0.mean() < 0.8 else "")
        + "or more edits and seeds that shrink the intervals of the ambiguous factors could reverse any factor "
        "reported here as not distinguishable from zero."
    )
    return " ".join(parts)


# --- the jobs' Reports -----------------------------------------------------------------------------


def edit_report(
    x0: torch.Tensor,
    rec: torch.Tensor,
    edited: torch.Tensor,
    *,
    preset: str,
    source: str,
    target: str,
    steps: int,
    inject: int,
    order: int,
    guidance: float,
    costs: dict[str, Any],
    timesteps: Any,
) -> Report:
    """Source, reconstruction and edit side by side, with their errors and costs (``rf.edit``)."""
    from methods.rf_solver.metrics import summary

    rec_m, edit_m = summary(rec, x0), summary(edited, x0)
    report = Report(
        title=f"RF-Edit: {source} → {target}",
        summary=f"{preset} model, {steps} steps, order {order}, inject {inject}, guidance {guidance}: "
        f"reconstruction PSNR {rec_m['psnr']:.1f} dB; edit MSE to source {edit_m['mse']:.4f}.",
    )
    report.metrics.update(
        {
            "recon_mse": rec_m["mse"],
            "recon_psnr": rec_m["psnr"],
            "recon_ssim": rec_m["ssim"],
            "edit_mse_to_source": edit_m["mse"],
            "edit_ssim_to_source": edit_m["ssim"],
            **costs,
        }
    )
    scale = 16 if x0.shape[-1] <= 16 else 8
    report.add_image("source.png", tensor_to_uint8(x0).repeat(scale, 0).repeat(scale, 1), caption="source")
    report.add_image(
        "reconstruction.png",
        tensor_to_uint8(rec).repeat(scale, 0).repeat(scale, 1),
        caption="reconstruction (same label, no injection)",
    )
    report.add_image(
        "edit.png",
        tensor_to_uint8(edited).repeat(scale, 0).repeat(scale, 1),
        caption=f"edit ({target}, inject {inject})",
    )
    report.add_image(
        "side_by_side.png",
        plots.image_grid([torch.cat([x0, rec, edited])], scale=scale),
        caption="source | reconstruction | edit",
    )
    report.add_section("Images", "![source | reconstruction | edit](artifact:side_by_side.png)")
    report.data = {"preset": preset, "timesteps": timesteps, "source": source, "target": target}
    return report


def reconstruct_report(
    x0: torch.Tensor,
    images: list[torch.Tensor],
    rows: list[dict[str, Any]],
    *,
    preset: str,
    label: str,
    nfes: list[int],
) -> Report:
    """Reconstruction error vs NFE per direction, Euler vs RF-Solver-2 at equal NFE (``rf.reconstruct``)."""
    report = Report(
        title=f"RF reconstruction of a {preset} image ({label})",
        summary="Invert then sample with the same label; RF-Solver-2 with N steps vs Euler with 2N.",
    )
    report.add_table(
        "Reconstruction vs NFE",
        ["solver", "steps", "NFE (both directions)", "MSE", "PSNR dB", "SSIM", "seconds"],
        [[r["solver"], r["steps"], r["nfe"], r["mse"], r["psnr"], r["ssim"], round(r["seconds"], 3)] for r in rows],
    )
    report.add_figure("recon_vs_nfe.png", plots.recon_vs_nfe(rows, "input"), caption="reconstruction MSE vs NFE")
    scale = 16 if x0.shape[-1] <= 16 else 8
    report.add_image(
        "reconstructions.png",
        plots.image_grid([torch.cat([x0, *images])], scale=scale),
        caption=f"source, then Euler/RF-Solver-2 at NFE {nfes[0]} and {nfes[-1]}",
    )
    for r in rows:
        tag = "rf2" if r["solver"] == "RF-Solver-2" else "euler"
        report.metrics[f"{tag}_mse_nfe{r['nfe'] // 2}"] = r["mse"]
    report.data = {"rows": rows}
    return report


# --- the reproductions' Reports --------------------------------------------------------------------

DATASET_KEYS = {
    "digits (held out)": "digits",
    "photo crops (held-out region)": "photo",
    "rf_edit_examples 32×32": "examples",
}
SOLVER_KEYS = {"RF-Solver-2": "rf2", "Euler (equal NFE)": "euler", "Euler (equal steps)": "euler_steps"}
TARGET_SHARE = 0.8  # the bar: k = 0 edits must reach the target before the trade-off is judged


def raw_values(ana: AnalyticResult, recon: list[ReconRow], inj_per: dict[int, list[float]], tr: TradeoffResult) -> dict:
    """The per-item values of ``reproduce rf_solver``: each sample's order, each image's MSE and target hit."""
    rec: dict[str, Any] = {}
    for r in recon:
        rec.setdefault(DATASET_KEYS.get(r.dataset, r.dataset), {}).setdefault(
            f"N{r.steps if r.solver != 'Euler (equal NFE)' else r.steps // 2}", {}
        )[SOLVER_KEYS[r.solver]] = r.per_image
    return {
        "analytic": {
            f"{flow}_order_{'euler' if o == 1 else 'rf2'}": v
            for flow, per in ana.sample_orders.items()
            for o, v in per.items()
        },
        "recon": rec,
        "same_label": {f"k{k}": v for k, v in inj_per.items()},
        "tradeoff": {
            "hits": {f"k{k}": v for k, v in tr.hits.items()},
            "mse": {f"k{k}": v for k, v in tr.mses.items()},
        },
    }


def evidence(raw: dict[str, Any]) -> Evidence:
    """Headline claims of ``rf_solver`` (spec §7.4, §7.6, §7.8) over per-sample / per-image values (bootstrap)."""
    ev = Evidence(raw)
    ana = raw["analytic"]
    if "mog_order_rf2" in ana:
        ev.headline(
            "RF-Solver-2 is second order on the mixture flow (order ≥ 1.75)", stat="mean", a="analytic/mog_order_rf2",
            null=1.75, interval="bootstrap", paper="second order (paper §3); spec §7.4: 2 ± 0.25",
            context=f"Euler {np.mean(ana['mog_order_euler']):.2f} (per-sample orders, NFE 32–256)",
        )  # fmt: skip
    for key, label, n, scale, unit in (
        ("digits", "held-out digits", "N10", 1e4, "MSE ×10⁻⁴"),
        ("photo", "held-out photo crops", "N10", 1e2, "MSE ×10⁻²"),
    ):
        cell = raw["recon"].get(key, {}).get(n, {})
        if cell.get("rf2") and cell.get("euler"):
            ev.headline(
                f"RF-Solver-2 reconstructs {label} better than Euler at equal NFE ({n.replace('N', 'N = ')})",
                stat="paired_diff", a=f"recon/{key}/{n}/rf2", b=f"recon/{key}/{n}/euler", direction="less",
                interval="bootstrap", scale=scale, unit=unit, digits=3,
                paper="lower inversion/reconstruction error at equal NFE (paper §4)",
                context=f"Euler {np.mean(cell['euler']) * scale:.3f}, RF-Solver-2 {np.mean(cell['rf2']) * scale:.3f}",
            )  # fmt: skip
    same = raw["same_label"]
    kn = max(int(k[1:]) for k in same)
    ev.headline(
        f"Same label: V injected at all N = {kn} steps does not raise reconstruction MSE (§7.6)", stat="paired_diff",
        a=f"same_label/k{kn}", b="same_label/k0", direction="less", interval="bootstrap", scale=1e5, unit="MSE ×10⁻⁵",
        digits=2, paper="k = N ≤ k = 0 (spec §7.6)", context=f"k = 0: {np.mean(same['k0']) * 1e5:.2f}",
    )  # fmt: skip
    hits, mses = raw["tradeoff"]["hits"], raw["tradeoff"]["mse"]
    kmax = max(int(k[1:]) for k in mses)
    ev.headline(
        "k = 0 edits reach the target label (≥ 80 %, the precondition of the trade-off)", stat="proportion",
        a="tradeoff/hits/k0", null=TARGET_SHARE, paper="— (issue's bar)",
        context=f"a random other digit: chance ≈ 10 % ({len(hits['k0'])} edits)",
    )  # fmt: skip
    ev.headline(
        f"Edit trade-off: MSE to the source lower at k = {kmax} than at k = 0 (§7.8)", stat="paired_diff",
        a=f"tradeoff/mse/k{kmax}", b="tradeoff/mse/k0", direction="less", interval="bootstrap", scale=1e2,
        unit="MSE ×10⁻²", digits=3, paper="more injected steps preserve more structure (paper Fig. 5)",
        context=f"k = 0: {np.mean(mses['k0']) * 1e2:.3f}",
    )  # fmt: skip
    ev.headline(
        f"Edit trade-off: target accuracy lower at k = {kmax} than at k = 0 (§7.8)", stat="paired_diff",
        a=f"tradeoff/hits/k{kmax}", b="tradeoff/hits/k0", direction="less", interval="bootstrap",
        paper="more injected steps weaken the edit (paper Fig. 5)",
        context=f"k = 0: {np.mean(hits['k0']):.2f}, k = {kmax}: {np.mean(hits[f'k{kmax}']):.2f}",
    )  # fmt: skip
    return ev


def reproduction_report(
    ana: AnalyticResult,
    recon: list[ReconRow],
    inj: dict[int, float],
    inj_per: dict[int, list[float]],
    tr: TradeoffResult,
    ab: AblationResult | None,
    *,
    models: list[dict[str, Any]],
    photo_sources: torch.Tensor,
    photo_sweep: dict[int, torch.Tensor],
    info: dict[str, Any],
) -> Report:
    """``reproduce rf_solver``: the headline table, the §7 checks, the three studies (and the grid), Reading."""
    raw = raw_values(ana, recon, inj_per, tr)
    ev = evidence(raw)
    counts = ev.counts()
    report = Report(
        title="RF-Solver and RF-Edit: reproduction at CPU scale",
        summary="Exact-error inversion on analytic flows, reconstruction with the project's tiny rectified-flow DiTs, "
        f"and the RF-Edit structure/edit trade-off on digits. Headline claims: {counts['holds']} hold, "
        f"{counts['fails']} fail, {counts['not resolved']} not resolved (percentile bootstrap over samples or "
        "images, Wilson for the share).",
    )
    report.sections.append(ev.section())
    report.add_figure(
        "error_vs_nfe.png",
        plots.error_vs_nfe(
            ana.curves,
            {
                "gauss": "Gaussian m=2, s=0.5 (linear grid)",
                "gauss_shift": "same, FLUX shift (L=256)",
                "mog": "3-component mixture (linear grid)",
            },
        ),
        caption="max |inversion error| vs NFE",
    )
    for about in models:
        report.add_json(f"{about['row'][0]}_model_config.json", about["config"])
    rows = [{k: v for k, v in asdict(r).items() if k != "per_image"} for r in recon]
    report.add_figure(
        "recon_vs_nfe_digits.png",
        plots.recon_vs_nfe(rows, "digits (held out)"),
        caption="digits reconstruction MSE vs NFE",
    )
    report.add_figure(
        "recon_vs_nfe_photo.png",
        plots.recon_vs_nfe(rows, "photo crops (held-out region)"),
        caption="photo reconstruction MSE vs NFE",
    )
    shown = [0, 2, 4, 8, 15]
    report.add_figure(
        "edit_tradeoff.png",
        plots.tradeoff(tr.ks, tr.target_acc, tr.mse_to_source, tr.mse_sem),
        caption="edit strength vs structure preservation",
    )
    report.add_image(
        "edit_examples.png",
        plots.image_grid([tr.sources] + [tr.examples[k] for k in shown]),
        caption=f"rows: source, then edits with k = {shown}",
    )
    report.add_image(
        "photo_edit_examples.png",
        plots.image_grid([photo_sources] + [photo_sweep[k] for k in (0, 2, 5, 15)]),
        caption="photo model, china → flower",
    )
    ab_md, ab_sum = ("", None) if ab is None else _ablation_markdown(ab)
    if ab is not None:
        report.add_figure("ablation.png", plots.ablation(ab), caption="RF-Edit ablation grid")
    checks = _checks(ana, recon, inj, tr)
    report.metrics.update(
        {
            "checks_passed": sum(c[2] == "pass" for c in checks),
            "checks_total": len(checks),
            "scorer_heldout_acc": info["scorer_heldout_acc"],
        }
    )
    report.metrics.update({k: info[k] for k in ("device", "dtype", "gpu") if k in info})
    report.add_section("Reading", _reading(ev, inj, tr, ab))
    report.add_section(
        "Checks (spec §7)",
        _table(
            "Measured checks (the spec's tolerances on single deterministic numbers; the headlines above carry the "
            "intervals)",
            ["check", "measured", "result"],
            checks,
        ),
    )
    report.add_section("1. Analytic flows: exact error vs NFE", _analytic_markdown(ana))
    report.add_section(
        "2. Reconstruction with the trained models",
        "\n\n".join(
            [
                _table(
                    "Models (≤ 1M parameters, trained here on CPU, EMA weights)",
                    ["preset", "parameters", "steps", "batch", "train seconds", "final loss (mean of last 100)"],
                    [m["row"] for m in models],
                ),
                _table(
                    "Invert then sample, same label, guidance 1, FLUX shift with L = 64 tokens",
                    ["dataset", "solver", "steps", "NFE", "MSE", "PSNR dB", "SSIM", "seconds"],
                    [[r.dataset, r.solver, r.steps, r.nfe, r.mse, r.psnr, r.ssim, round(r.seconds, 2)] for r in recon],
                    note="MSE/PSNR on [0, 1] pixels; SSIM with a 7×7 Gaussian window. Equal NFE: RF-Solver-2 with N "
                    'steps vs Euler with 2N; "equal steps" is the paper\'s un-halved comparison.',
                ),
                "![digits](artifact:recon_vs_nfe_digits.png) ![photo](artifact:recon_vs_nfe_photo.png)",
                _table(
                    f"Same label, inject k of N = {max(inj)} steps, guidance 1 (digits, RF-Solver-2)",
                    ["inject k", "reconstruction MSE"],
                    [[k, v] for k, v in inj.items()],
                    note="V is keyed by the interval's upper time (spec §3.5), so a denoising evaluation at t_j receives "
                    "V the inversion computed at t_{j+1}; the main evaluations differ by one interval (midpoints "
                    "match). Injecting late steps, where that offset matters most, costs reconstruction accuracy.",
                ),
            ]
        ),
    )
    report.add_section(
        "3. Edit trade-off on digits",
        "\n\n".join(
            [
                _table(
                    f"{tr.num_images} held-out digits, each edited to a random other digit (N = {tr.num_steps}, "
                    f"RF-Solver-2, guidance {tr.guidance})",
                    ["inject k", "target-label acc", "source-label acc", "MSE to source", "± s.e."],
                    [
                        [k, a, s, m, e]
                        for k, a, s, m, e in zip(tr.ks, tr.target_acc, tr.source_acc, tr.mse_to_source, tr.mse_sem)
                    ],
                    note=f"Scorer: logistic regression on the 8×8 digits training split (held-out accuracy "
                    f"{info['scorer_heldout_acc']:.3f}), applied after 2×2 average pooling.",
                ),
                "![trade-off](artifact:edit_tradeoff.png)",
                "Digits (rows: source, then k = 0, 2, 4, 8, 15): ![digit edits](artifact:edit_examples.png)",
                "Photo crops, china → flower (rows: source, then k = 0, 2, 5, 15): "
                "![photo edits](artifact:photo_edit_examples.png)",
            ]
        ),
    )
    if ab is not None:
        report.add_section(
            "4. Which factor carries the effect: RF-Edit ablation grid",
            "The spec's configuration (first level of each factor) is the default everywhere else; the other levels "
            "are options (`rf.edit` params `v_keys`, `cfg_halves`, `blocks`; guidance 1 is `guidance=1`). "
            f"Grid time: {ab.seconds:.0f} s.\n\n" + ab_md,
        )
        report.metrics["ablation_k0_target_acc"] = ab_sum["k0_target_acc"]
    report.add_section(
        "How this was produced",
        "\n".join(
            [
                f"- Command: `{info['command']}` (seed 0 everywhere: deterministic on the CPU).",
                f"- {info['machine']}",
                f"- Wall time: {info['seconds']:.0f} s (model training excluded when the models were already cached; "
                "training seconds are in the models table).",
                "- Guidance: FLUX-dev feeds guidance to a distilled model; the tiny DiT is trained with 10% label dropout "
                "and uses classifier-free guidance (one batched evaluation counts as one NFE). Inversion uses guidance 1.",
                "- Data: digits held out from training; photo crops from the right 20% of each scikit-learn photo "
                "(training crops come from the left 80%); the three rf_edit_examples images centre-cropped to 32×32.",
            ]
        ),
    )
    report.add_json(
        "results.json",
        ev.to_json(options={k: info[k] for k in ("n_recon", "n_edit", "digits_model")},
                   info={k: v for k, v in info.items() if k not in ("n_recon", "n_edit", "digits_model")}),
        caption="per-sample orders, per-image MSEs and target hits, and the headline specs",
    )  # fmt: skip
    report.data = {
        "ablation": None
        if ab is None
        else {"cells": ab_sum["rows"], "effects": {k: ab.factor_effects(k) for k in ab.ks if k}},
        "slopes": ana.slopes,
        "round_trips": ana.round_trips,
        "recon": rows,
        "same_label_injection": inj,
        "checks": checks,
        "tradeoff": {
            k: v for k, v in asdict(tr).items() if k not in ("examples", "sources", "targets", "hits", "mses")
        },
        "verdicts": {h.claim: h.result for h in ev.headlines},
    }
    return report


def _cell_key(keys: str, cfg: str, blocks: str) -> str:
    half, gv = next((h, g) for name, h, g in ABLATION_CFG if name == cfg)
    return f"{keys}.{'g1' if gv == 1.0 else half}.{blocks}"


def ablation_raw(ab: AblationResult) -> dict[str, Any]:
    """The grid's per-image values: target hit and MSE to the source per cell and k; same-label MSE per k."""
    cells = {}
    for keys, cfg, blocks in ab.cells():
        cells[_cell_key(keys, cfg, blocks)] = {
            "hits": {f"k{k}": [int(v) for v in ab.hits[(keys, cfg, blocks, k)]] for k in ab.ks},
            "mse": {f"k{k}": [float(v) for v in ab.mses[(keys, cfg, blocks, k)]] for k in ab.ks},
        }
    recon = {
        f"{keys}.{blocks}": {f"k{k}": [float(v) for v in ab.recon[(keys, blocks, k)]] for k in ab.recon_ks}
        for keys in ABLATION_KEYS
        for blocks in ABLATION_BLOCKS
    }
    return {"cells": cells, "recon": recon, "ks": list(ab.ks), "recon_ks": list(ab.recon_ks)}


def ablation_evidence(raw: dict[str, Any]) -> Evidence:
    """Headlines of the grid: the precondition, the spec configuration's trade-off, the one cell that turns it,
    and §7.6 under both V keyings (paired bootstrap over the edited images)."""
    ev = Evidence(raw)
    kn, rk = max(raw["ks"]), max(raw["recon_ks"])
    spec = "interval.both.all"
    hits0 = raw["cells"][spec]["hits"]["k0"]
    ev.headline(
        "k = 0 edits reach the target label (≥ 80 %, the grid's precondition)", stat="proportion",
        a=f"cells/{spec}/hits/k0", null=TARGET_SHARE, paper="— (issue's bar)",
        context=f"a random other digit: chance ≈ 10 % ({len(hits0)} edits)",
    )  # fmt: skip
    for cell, label in ((spec, "spec configuration"), ("interval.cond.all", "V into the conditional CFG half only")):
        m = raw["cells"][cell]["mse"]
        ev.headline(
            f"{label}: MSE to the source lower at k = {kn} than at k = 0 (the paper's trade-off)", stat="paired_diff",
            a=f"cells/{cell}/mse/k{kn}", b=f"cells/{cell}/mse/k0", direction="less", interval="bootstrap",
            scale=1e2, unit="MSE ×10⁻²", digits=3, paper="more injected steps preserve more structure (paper Fig. 5)",
            context=f"k = 0: {np.mean(m['k0']) * 1e2:.3f}",
        )  # fmt: skip
    cond = raw["cells"]["interval.cond.all"]["hits"]
    ev.headline(
        f"V into the conditional CFG half only still edits at k = {kn} (target ≥ 80 %)", stat="proportion",
        a=f"cells/interval.cond.all/hits/k{kn}", null=TARGET_SHARE, paper="— (the edit must survive the injection)",
        context=f"k = 0: {np.mean(cond['k0']):.2f}",
    )  # fmt: skip
    for keys, label in (
        ("interval", "V keyed by the interval's upper time (spec)"),
        ("eval", "V keyed by the evaluation time"),
    ):
        r = raw["recon"][f"{keys}.all"]
        ev.headline(
            f"Same label, {label}: k = N = {rk} does not raise reconstruction MSE (§7.6)", stat="paired_diff",
            a=f"recon/{keys}.all/k{rk}", b=f"recon/{keys}.all/k0", direction="less", interval="bootstrap",
            scale=1e5, unit="MSE ×10⁻⁵", digits=2, paper="k = N ≤ k = 0 (spec §7.6)",
            context=f"k = 0: {np.mean(r['k0']) * 1e5:.2f}",
        )  # fmt: skip
    return ev


def ablation_report(ab: AblationResult, about: dict[str, Any], info: dict[str, Any]) -> Report:
    """``reproduce rf_solver_ablation``: headline table, model, the grid's tables and figure, Reading."""
    raw = ablation_raw(ab)
    ev = ablation_evidence(raw)
    counts = ev.counts()
    n_edit = info["n_edit"]
    report = Report(
        title="RF-Edit ablation grid: which factor carries the edit trade-off",
        summary=f"{n_edit} held-out digits edited to a random other digit under 12 configurations: "
        "{V keyed by the interval's upper time (spec), V keyed by the evaluation time} × {source V into both "
        "classifier-free-guidance halves (spec), conditional half only, guidance 1} × {all single-stream blocks "
        "(spec), the later half only (as FLUX)}; intervals over the edits. Headline claims: "
        f"{counts['holds']} hold, {counts['fails']} fail, {counts['not resolved']} not resolved.",
    )
    report.sections.append(ev.section())
    report.add_json(f"{about['row'][0]}_model_config.json", about["config"])
    md, summary = _ablation_markdown(ab)
    report.add_figure("ablation.png", plots.ablation(ab), caption="RF-Edit ablation grid")
    spec = (ABLATION_KEYS[0], ABLATION_CFG[0][0], ABLATION_BLOCKS[0])
    report.metrics.update(
        {
            "k0_target_acc_spec": float(ab.hits[(*spec, 0)].mean()),
            "kN_target_acc_spec": float(ab.hits[(*spec, max(ab.ks))].mean()),
            "d_mse_kN_spec": float((ab.mses[(*spec, max(ab.ks))] - ab.mses[(*spec, 0)]).mean()),
            "n_edits": n_edit,
            "scorer_heldout_acc": info["scorer_heldout_acc"],
        }
    )
    report.metrics.update({k: info[k] for k in ("device", "dtype", "gpu") if k in info})
    report.add_section("Reading", _ablation_reading(ab, int(about["row"][2])))
    report.add_section(
        "Model",
        _table(
            "Digits model (≤ 1M parameters, trained here on CPU, EMA weights)",
            ["preset", "parameters", "steps", "batch", "train seconds", "final loss (mean of last 100)"],
            [about["row"]],
            note=f"Preset `{info['preset']}` (`-o preset=digits` is the 800-step model the earlier runs used). The "
            "issue asks for a model strong enough that k = 0 edits reach the target in ≥ 80% of cases; the grid's "
            "k = 0 column shows how far this one gets.",
        ),
    )
    report.add_section(
        "Grid",
        "The spec's configuration (first level of each factor) stays the default of `rf.edit` and of "
        "`paperworks reproduce rf_solver`; the other levels are options (`v_keys`, `cfg_halves`, `blocks`, "
        f"`guidance`). Scorer: logistic regression on the 8×8 digits training split (held-out accuracy "
        f"{info['scorer_heldout_acc']:.3f}). Grid time {ab.seconds:.0f} s.\n\n" + md,
    )
    report.add_section(
        "How this was produced",
        "\n".join(
            [
                f"- Command: `{info['command']}` (seed 0: targets, model, bootstrap; deterministic on the CPU).",
                f"- Edited images: held-out digits {info['offset']}–{info['offset'] + n_edit - 1} (the ones "
                "`paperworks reproduce rf_solver` edits); targets drawn as in its trade-off study.",
                f"- {info['machine']}",
                f"- Wall time: {info['seconds']:.0f} s.",
            ]
        ),
    )
    report.add_json(
        "results.json",
        ev.to_json(options={k: info[k] for k in ("preset", "offset", "n_edit")}, info={"command": info["command"],
                   "seconds": info["seconds"], "machine": info["machine"]}),
        caption="per-image target hits and MSEs per cell and k, and the headline specs",
    )  # fmt: skip
    report.data = {
        "cells": summary["rows"],
        "effects": {k: ab.factor_effects(k) for k in ab.ks if k},
        "verdicts": {h.claim: h.result for h in ev.headlines},
    }
    return report
