"""``paperworks reproduce rf_solver``: runs the three studies and writes ``docs/results/rf_solver.md``."""

from __future__ import annotations

import logging
import os
import platform
import time
from dataclasses import asdict
from pathlib import Path

import torch

from methods.rf_solver.checkpoints import get_model, train_info
from methods.rf_solver.config import get_preset
from methods.rf_solver.data import image_to_tensor, load_digits_split, photo_crops
from methods.rf_solver.edit import DiTVelocity, edit_sweep
from methods.rf_solver.experiments import (
    analytic_study, edit_tradeoff, injection_reconstruction_check, reconstruction_study,
)
from methods.rf_solver.model import count_params
from methods.rf_solver import plots
from methods.rf_solver.scorer import digit_scorer
from services.jobs import JobContext, Report

log = logging.getLogger(__name__)

SPEC_TABLE = {  # spec §6.1, measured by the spec's author in numpy (not the paper's numbers)
    ("gauss", 16): (0.355, 1.8e-3), ("gauss", 64): (0.092, 2.8e-5),
    ("mog", 16): (0.178, 2.5e-2), ("mog", 64): (0.047, 1.0e-3), ("mog", 256): (0.012, 5.8e-5),
}
EDIT_KS = (0, 1, 2, 3, 4, 6, 8, 11, 15)


def _example_images(data_dir: Path, size: int) -> tuple[list[str], torch.Tensor | None]:
    folder = data_dir / "rf_edit_examples" / "source"
    files = sorted(folder.glob("*.jpg")) if folder.is_dir() else []
    if not files:
        return [], None
    return [f.name for f in files], torch.cat([image_to_tensor(f, size, 3) for f in files])


def _analytic_section(report: Report, progress: JobContext) -> dict:
    progress(0.0, "analytic flows")
    res = analytic_study()
    report.add_figure("error_vs_nfe.png", plots.error_vs_nfe(res.curves, {
        "gauss": "Gaussian m=2, s=0.5 (linear grid)", "gauss_shift": "same, FLUX shift (L=256)",
        "mog": "3-component mixture (linear grid)"}), caption="max |inversion error| vs NFE")
    rows = []
    for name in ("gauss", "mog"):
        by_nfe = {p.nfe: p for p in res.curves[name][1]}
        rf2 = {p.nfe: p for p in res.curves[name][2]}
        rf3 = {p.nfe: p for p in res.curves[name][3]}
        for nfe in (16, 24, 48, 64, 96, 256):
            spec = SPEC_TABLE.get((name, nfe), ("", ""))
            rows.append([name, nfe, by_nfe[nfe].error, rf2[nfe].error, rf3[nfe].error if nfe in rf3 else "",
                         by_nfe[nfe].error / rf2[nfe].error, spec[0], spec[1]])
    report.add_table("Inversion error at equal NFE (max |z_1 − exact|; Euler 2N steps vs RF-Solver-2 N steps)",
                     ["flow", "NFE", "Euler", "RF-Solver-2", "RF-Solver-3", "Euler / RF-Solver-2",
                      "spec §6.1 Euler", "spec §6.1 RF-Solver-2"], rows,
                     note="Spec §6.1 columns were measured by the spec's author (numpy, 1-D); the paper's own "
                          "tables were not available offline, so no paper number is quoted.")
    report.add_table("Observed convergence order (−slope of log error vs log NFE, NFE 16–256)",
                     ["flow", "Euler", "RF-Solver-2", "RF-Solver-3"],
                     [[n, s[1], s[2], s[3]] for n, s in res.slopes.items()])
    report.add_table("Round trip on the mixture (invert then sample, max |x − x̂|)",
                     ["NFE per direction", "Euler", "RF-Solver-2"],
                     [[r["nfe_per_direction"], r["euler"], r["rf_solver2"]] for r in res.round_trips])
    report.add_section("Analytic flows", "Euler converges at order ≈ 1 and RF-Solver-2 at ≈ 2 on the mixture "
                       "(≈ 3 on the single Gaussian: the midpoint rule superconverges on that affine field).\n\n"
                       "![error vs NFE](artifact:error_vs_nfe.png)")
    return {"slopes": res.slopes, "round_trips": res.round_trips}


def _model_section(report: Report, name: str, progress: JobContext) -> DiTVelocity:
    progress(0.0, f"loading or training the {name} model")
    preset = get_preset(name)
    t0 = time.perf_counter()
    model, folder = get_model(preset, callbacks=(lambda s, _l: progress(s / preset.train.steps, f"train {name}"),))
    info = train_info(folder)
    losses = info.get("losses", [])
    report.metrics[f"{name}_params"] = count_params(model)
    report.metrics[f"{name}_train_seconds"] = round(float(info.get("seconds", 0.0)), 1)
    report.metrics[f"{name}_final_loss_avg100"] = float(sum(losses[-100:]) / max(1, len(losses[-100:])))
    report.add_json(f"{name}_model_config.json", {"folder": str(folder), "loaded_in_s": time.perf_counter() - t0,
                                                   "model": preset.model.to_dict(), "train": preset.train.to_dict()})
    return DiTVelocity(model)


def run_reproduction(out_dir: Path, progress: JobContext, *, n_recon: int = 64, n_edit: int = 50,
                     threads: int = 0) -> Path:
    """Run every study and write ``out_dir/rf_solver.md`` with its figures in ``out_dir/rf_solver/``."""
    if threads > 0:
        torch.set_num_threads(threads)
    from services.config import get_settings

    start = time.perf_counter()
    report = Report(title="RF-Solver and RF-Edit: reproduction at CPU scale",
                    summary="Exact-error inversion on analytic flows, reconstruction with the project's tiny "
                            "rectified-flow DiT, and the RF-Edit structure/edit trade-off on digits.")
    data = {"analytic": _analytic_section(report, progress.sub(0.0, 0.1))}
    digits = _model_section(report, "digits", progress.sub(0.1, 0.45))
    photo = _model_section(report, "photo", progress.sub(0.45, 0.7))

    progress(0.7, "reconstruction")
    test = load_digits_split("test")
    g = torch.Generator().manual_seed(0)
    crops, crop_labels = photo_crops(32, 32, generator=g, holdout=True)
    rows = reconstruction_study(digits, test.images[:n_recon], test.labels[:n_recon], "digits (held out)")
    rows += reconstruction_study(photo, crops, crop_labels, "photo crops (held-out region)")
    names, examples = _example_images(Path(get_settings().data_dir), 32)
    if examples is not None:   # real unseen photos; label "china" (the nearer of the two photos' styles)
        rows += reconstruction_study(photo, examples, torch.zeros(len(names), dtype=torch.long),
                                     "rf_edit_examples 32×32")
    dict_rows = [asdict(r) for r in rows]
    report.add_table("Reconstruction (invert then sample, same label, guidance 1)",
                     ["dataset", "solver", "steps", "NFE", "MSE", "PSNR dB", "SSIM", "seconds"],
                     [[r.dataset, r.solver, r.steps, r.nfe, r.mse, r.psnr, r.ssim, round(r.seconds, 2)] for r in rows],
                     note="MSE/PSNR on [0, 1] pixels. Equal NFE: RF-Solver-2 with N steps vs Euler with 2N.")
    report.add_figure("recon_vs_nfe_digits.png", plots.recon_vs_nfe(dict_rows, "digits (held out)"),
                      caption="digits reconstruction MSE vs NFE")
    report.add_figure("recon_vs_nfe_photo.png", plots.recon_vs_nfe(dict_rows, "photo crops (held-out region)"),
                      caption="photo reconstruction MSE vs NFE")
    inj = injection_reconstruction_check(digits, test.images[:n_recon], test.labels[:n_recon])
    report.metrics["same_label_recon_mse_k0"] = inj["k=0"]
    report.metrics["same_label_recon_mse_kN"] = inj["k=10"]

    progress(0.8, "edit trade-off")
    ev = load_digits_split("test")
    tr = edit_tradeoff(digits, ev.images[n_recon:n_recon + n_edit], ev.labels[n_recon:n_recon + n_edit], EDIT_KS)
    report.add_table(f"Edit trade-off on {tr.num_images} held-out digits (N={tr.num_steps}, RF-Solver-2, "
                     f"guidance {tr.guidance}, target = random other digit)",
                     ["inject k", "target-label acc", "source-label acc", "MSE to source", "± s.e."],
                     [[k, a, s, m, e] for k, a, s, m, e in
                      zip(tr.ks, tr.target_acc, tr.source_acc, tr.mse_to_source, tr.mse_sem)])
    report.add_figure("edit_tradeoff.png", plots.tradeoff(tr.ks, tr.target_acc, tr.mse_to_source, tr.mse_sem),
                      caption="edit strength vs structure preservation")
    shown = [0, 2, 4, 8, 15]
    report.add_image("edit_examples.png", plots.image_grid([tr.sources] + [tr.examples[k] for k in shown]),
                     caption=f"rows: source, then edits with k = {shown}")
    report.metrics["edit_target_acc_k0"] = tr.target_acc[0]
    report.metrics["edit_target_acc_kN"] = tr.target_acc[-1]
    report.metrics["edit_mse_k0"] = tr.mse_to_source[0]
    report.metrics["edit_mse_kN"] = tr.mse_to_source[-1]
    report.metrics["edit_mse_spearman_vs_k"] = tr.spearman()
    report.metrics["edit_mse_monotone_violations"] = tr.monotone_violations()
    report.metrics["scorer_heldout_acc"] = digit_scorer().held_out_accuracy()

    c_src, _ = photo_crops(4, 32, generator=torch.Generator().manual_seed(1), holdout=True)
    sweep = edit_sweep(photo, c_src, "china", "flower", (0, 2, 5, 15), num_steps=15, guidance=2.0)
    report.add_image("photo_edit_examples.png", plots.image_grid([c_src] + [sweep[k] for k in (0, 2, 5, 15)]),
                     caption="photo model, label china → flower: source, then k = 0, 2, 5, 15")
    report.add_section("Edit trade-off", "Larger k keeps more of the source (lower MSE) and edits less "
                       "(lower target-label accuracy).\n\n![trade-off](artifact:edit_tradeoff.png)\n\n"
                       "![digit edits](artifact:edit_examples.png)\n\n![photo edits](artifact:photo_edit_examples.png)")
    elapsed = time.perf_counter() - start
    report.add_section("How this was produced", "\n".join([
        "Command: `paperworks reproduce rf_solver` (seed 0 everywhere).",
        f"Machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, "
        f"torch {torch.__version__} with {torch.get_num_threads()} threads, Python {platform.python_version()}.",
        f"Wall time: {elapsed:.0f} s including training (models cached under the settings cache_dir).",
        "Guidance: FLUX-dev feeds guidance to a distilled model; the tiny DiT is trained with 10% label "
        "dropout and uses classifier-free guidance instead (one batched evaluation counts as one NFE).",
        "Reconstruction images: digits held out from training; photo crops from the right 20% of each "
        "photo (training crops come from the left 80%); the three rf_edit_examples images centre-cropped "
        "to 32×32 (never seen in training).",
    ]))
    report.data = {**data, "recon": dict_rows, "same_label_injection": inj,
                   "tradeoff": {k: v for k, v in asdict(tr).items() if k not in ("examples", "sources", "targets")}}
    progress(1.0, "done")
    return report.write_markdown(Path(out_dir) / "rf_solver.md")
