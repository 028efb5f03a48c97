"""``paperworks reproduce rf_solver``: runs the three studies and builds the report (``docs/results/rf_solver.md``)."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from core.jobs import JobContext, Report, Table
from core.provenance import provenance_line
from core.stats import bootstrap_ci, wilson
from methods.rf_solver import plots
from methods.rf_solver.checkpoints import get_model, train_info
from methods.rf_solver.config import get_preset
from methods.rf_solver.data import image_to_tensor, load_digits_split, photo_crops
from methods.rf_solver.edit import DiTVelocity, edit_sweep
from methods.rf_solver.experiments import (
    ABLATION_BLOCKS,
    ABLATION_CFG,
    ABLATION_KEYS,
    AblationResult,
    AnalyticResult,
    ReconRow,
    TradeoffResult,
    analytic_study,
    edit_ablation,
    edit_tradeoff,
    injection_reconstruction_check,
    reconstruction_study,
)
from methods.rf_solver.model import count_params
from methods.rf_solver.scorer import digit_scorer

log = logging.getLogger(__name__)

SPEC_TABLE = {  # spec §6.1, measured by the spec's author in numpy (not the paper's numbers)
    ("gauss", 16): (0.355, 1.8e-3),
    ("gauss", 64): (0.092, 2.8e-5),
    ("mog", 16): (0.178, 2.5e-2),
    ("mog", 64): (0.047, 1.0e-3),
    ("mog", 256): (0.012, 5.8e-5),
}
EDIT_KS = (0, 1, 2, 3, 4, 6, 8, 11, 15)


def _table(title: str, columns: list[str], rows: list[list[Any]], note: str = "") -> str:
    return Table(title=title, columns=columns, rows=rows, note=note).to_markdown()


def _example_images(data_dir: Path, size: int) -> tuple[list[str], torch.Tensor | None]:
    folder = data_dir / "rf_edit_examples" / "source"
    files = sorted(folder.glob("*.jpg")) if folder.is_dir() else []
    if not files:
        return [], None
    return [f.name for f in files], torch.cat([image_to_tensor(f, size, 3) for f in files])


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


def _model(
    report: Report, name: str, progress: JobContext, device: Any = "cpu", amp: str = "off"
) -> tuple[DiTVelocity, list[Any]]:
    progress(0.0, f"loading or training the {name} model")
    preset = get_preset(name)
    model, folder = get_model(
        preset,
        callbacks=(lambda s, _l: progress(s / preset.train.steps, f"train {name}"),),
        device=device,
        amp=amp,
    )
    info = train_info(folder)
    losses = info.get("losses", [])
    report.add_json(
        f"{name}_model_config.json",
        {"folder": str(folder), "model": preset.model.to_dict(), "train": preset.train.to_dict()},
    )
    row = [
        name,
        count_params(model),
        preset.train.steps,
        preset.train.batch_size,
        round(info.get("seconds", 0.0)),
        sum(losses[-100:]) / max(1, len(losses[-100:])),
    ]
    return DiTVelocity(model), row


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


def _reading(inj: dict[int, float], tr: TradeoffResult, ab: AblationResult | None) -> str:
    """A plain-words paragraph: what holds, what does not, what would change the conclusion (from the numbers)."""
    n = max(inj)
    parts = [
        "The solver half of the paper holds here without qualification: RF-Solver-2 is second order (third on the "
        "affine Gaussian field), beats Euler at equal NFE on every flow and trained model, and its round trips are "
        "two orders of magnitude tighter.",
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


def run_reproduction(
    progress: JobContext,
    *,
    n_recon: int = 64,
    n_edit: int = 50,
    threads: int = 0,
    ablation: bool = False,
    digits_model: str = "digits_long",
    device: str = "cpu",
    amp: str = "off",
) -> Report:
    """Run every study and build the report (written as ``rf_solver.md`` + ``rf_solver/`` by the registry).

    ``device``/``amp``: where the models train (when not cached) and the solves run; the analytic
    flows, the metrics and the scorer stay on the CPU.
    """
    from core.device import autocast, device_provenance, resolve_device

    dev = resolve_device(device)
    if threads > 0:
        torch.set_num_threads(threads)
    from core.config import get_settings

    start = time.perf_counter()
    report = Report(
        title="RF-Solver and RF-Edit: reproduction at CPU scale",
        summary="Exact-error inversion on analytic flows, reconstruction with the project's tiny "
        "rectified-flow DiTs, and the RF-Edit structure/edit trade-off on digits.",
    )
    progress(0.0, "analytic flows")
    ana = analytic_study()
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
    digits, drow = _model(report, digits_model, progress.sub(0.1, 0.45), dev, amp)
    photo, prow = _model(report, "photo", progress.sub(0.45, 0.7), dev, amp)
    with autocast(dev, amp):  # the solves (the models are on dev)
        progress(0.7, "reconstruction")
        test = load_digits_split("test")
        crops, crop_labels = photo_crops(32, 32, generator=torch.Generator().manual_seed(0), holdout=True)
        recon = reconstruction_study(digits, test.images[:n_recon], test.labels[:n_recon], "digits (held out)")
        recon += reconstruction_study(photo, crops, crop_labels, "photo crops (held-out region)")
        names, examples = _example_images(Path(get_settings().data_dir), 32)
        if examples is not None:  # real photos never seen in training, reconstructed under the label "china"
            recon += reconstruction_study(
                photo, examples, torch.zeros(len(names), dtype=torch.long), "rf_edit_examples 32×32"
            )
        rows = [asdict(r) for r in recon]
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
        inj = injection_reconstruction_check(digits, test.images[:n_recon], test.labels[:n_recon])

        progress(0.8, "edit trade-off")
        sl = slice(n_recon, n_recon + n_edit)
        tr = edit_tradeoff(digits, test.images[sl], test.labels[sl], EDIT_KS)
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
        c_src, _ = photo_crops(4, 32, generator=torch.Generator().manual_seed(1), holdout=True)
        sweep = edit_sweep(photo, c_src.to(dev), "china", "flower", (0, 2, 5, 15), num_steps=15, guidance=2.0)
        sweep = {k: v.float().cpu() for k, v in sweep.items()}
        report.add_image(
            "photo_edit_examples.png",
            plots.image_grid([c_src] + [sweep[k] for k in (0, 2, 5, 15)]),
            caption="photo model, china → flower",
        )

        ab_md, ab_sum, ab = "", None, None
        if ablation:
            progress(0.85, "RF-Edit ablation grid")
            ab = edit_ablation(digits, test.images[sl], test.labels[sl], progress=progress.sub(0.85, 0.99))
            ab_md, ab_sum = _ablation_markdown(ab)
            report.add_figure("ablation.png", plots.ablation(ab), caption="RF-Edit ablation grid")
    report.metrics.update(device_provenance(dev, amp))

    checks = _checks(ana, recon, inj, tr)
    report.metrics.update(
        {
            "checks_passed": sum(c[2] == "pass" for c in checks),
            "checks_total": len(checks),
            "scorer_heldout_acc": digit_scorer().held_out_accuracy(),
        }
    )
    report.add_section("Checks (spec §7)", _table("Measured checks", ["check", "measured", "result"], checks))
    report.add_section("1. Analytic flows: exact error vs NFE", _analytic_markdown(ana))
    report.add_section(
        "2. Reconstruction with the trained models",
        "\n\n".join(
            [
                _table(
                    "Models (≤ 1M parameters, trained here on CPU, EMA weights)",
                    ["preset", "parameters", "steps", "batch", "train seconds", "final loss (mean of last 100)"],
                    [drow, prow],
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
                    f"{digit_scorer().held_out_accuracy():.3f}), applied after 2×2 average pooling.",
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
    report.add_section("Reading", _reading(inj, tr, ab))
    elapsed = time.perf_counter() - start
    report.add_section(
        "How this was produced",
        "\n".join(
            [
                "- Command: `paperworks reproduce rf_solver"
                + (" -o ablation=true" if ablation else "")
                + (f" -o digits_model={digits_model}" if digits_model != "digits_long" else "")
                + "` (seed 0 everywhere).",
                f"- {provenance_line()}",
                f"- Wall time: {elapsed:.0f} s (model training excluded when the models were already cached; "
                "training seconds are in the models table).",
                "- Guidance: FLUX-dev feeds guidance to a distilled model; the tiny DiT is trained with 10% label dropout "
                "and uses classifier-free guidance (one batched evaluation counts as one NFE). Inversion uses guidance 1.",
                "- Data: digits held out from training; photo crops from the right 20% of each scikit-learn photo "
                "(training crops come from the left 80%); the three rf_edit_examples images centre-cropped to 32×32.",
            ]
        ),
    )
    report.data = {
        "ablation": None
        if ab is None
        else {"cells": ab_sum["rows"], "effects": {k: ab.factor_effects(k) for k in ab.ks if k}},
        "slopes": ana.slopes,
        "round_trips": ana.round_trips,
        "recon": rows,
        "same_label_injection": inj,
        "checks": checks,
        "tradeoff": {k: v for k, v in asdict(tr).items() if k not in ("examples", "sources", "targets")},
    }
    progress(1.0, "done")
    return report


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


def run_ablation_reproduction(
    progress: JobContext,
    *,
    offset: int = 64,
    n_edit: int = 50,
    threads: int = 0,
    preset: str = "digits_long",
    device: str = "cpu",
    amp: str = "off",
) -> Report:
    """The RF-Edit ablation grid on its own (``paperworks reproduce rf_solver_ablation``), solved on ``device``."""
    from core.device import autocast, device_provenance, resolve_device

    dev = resolve_device(device)
    if threads > 0:
        torch.set_num_threads(threads)
    start = time.perf_counter()
    report = Report(
        title="RF-Edit ablation grid: which factor carries the edit trade-off",
        summary=f"{n_edit} held-out digits edited to a random other digit under 12 configurations: "
        "{V keyed by the interval's upper time (spec), V keyed by the evaluation time} × {source V into both "
        "classifier-free-guidance halves (spec), conditional half only, guidance 1} × {all single-stream blocks "
        "(spec), the later half only (as FLUX)}; intervals over the edits.",
    )
    digits, drow = _model(report, preset, progress.sub(0.0, 0.3), dev, amp)
    test = load_digits_split("test")
    sl = slice(offset, offset + n_edit)
    with autocast(dev, amp):
        ab = edit_ablation(digits, test.images[sl], test.labels[sl], progress=progress.sub(0.3, 0.98))
    report.metrics.update(device_provenance(dev, amp))
    md, summary = _ablation_markdown(ab)
    report.add_figure("ablation.png", plots.ablation(ab), caption="RF-Edit ablation grid")
    spec = (ABLATION_KEYS[0], ABLATION_CFG[0][0], ABLATION_BLOCKS[0])
    report.metrics.update(
        {
            "k0_target_acc_spec": float(ab.hits[(*spec, 0)].mean()),
            "kN_target_acc_spec": float(ab.hits[(*spec, max(ab.ks))].mean()),
            "d_mse_kN_spec": float((ab.mses[(*spec, max(ab.ks))] - ab.mses[(*spec, 0)]).mean()),
            "n_edits": n_edit,
            "scorer_heldout_acc": digit_scorer().held_out_accuracy(),
        }
    )
    report.add_section(
        "Model",
        _table(
            "Digits model (≤ 1M parameters, trained here on CPU, EMA weights)",
            ["preset", "parameters", "steps", "batch", "train seconds", "final loss (mean of last 100)"],
            [drow],
            note=f"Preset `{preset}` (`-o preset=digits` is the 800-step model the earlier runs used). The issue "
            "asks for a model strong enough that k = 0 edits reach the target in ≥ 80% of cases; the grid's k = 0 "
            "column shows how far this one gets.",
        ),
    )
    report.add_section(
        "Grid",
        "The spec's configuration (first level of each factor) stays the default of `rf.edit` and of "
        "`paperworks reproduce rf_solver`; the other levels are options (`v_keys`, `cfg_halves`, `blocks`, "
        f"`guidance`). Scorer: logistic regression on the 8×8 digits training split (held-out accuracy "
        f"{digit_scorer().held_out_accuracy():.3f}). Grid time {ab.seconds:.0f} s.\n\n" + md,
    )
    report.add_section("Reading", _ablation_reading(ab, int(drow[2])))
    report.add_section(
        "How this was produced",
        "\n".join(
            [
                f"- Command: `paperworks reproduce rf_solver_ablation -o preset={preset} -o n_edit={n_edit}` "
                "(seed 0: targets, model, bootstrap).",
                f"- Edited images: held-out digits {offset}–{offset + n_edit - 1} (the ones "
                "`paperworks reproduce rf_solver` edits); targets drawn as in its trade-off study.",
                f"- {provenance_line()}",
                f"- Wall time: {time.perf_counter() - start:.0f} s.",
            ]
        ),
    )
    report.data = {"cells": summary["rows"], "effects": {k: ab.factor_effects(k) for k in ab.ks if k}}
    progress(1.0, "done")
    return report
