"""``paperworks reproduce fourier_mamba``: train, evaluate, ablate, and build the results report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.ndimage import median_filter

from core.config import get_settings
from core.device import device_provenance
from core.jobs import JobContext, Report
from core.provenance import provenance_line
from core.stats import normal_half_width
from methods.fourier_mamba.config import Preset
from methods.fourier_mamba.data import rain100l_pairs
from methods.fourier_mamba.evaluate import (
    PairScores,
    derain_np,
    evaluate_crops,
    heldout_crops,
    score_pair,
    summarize,
    to_hwc,
)
from methods.fourier_mamba.model import count_params
from methods.fourier_mamba.service import checkpoint_path, fit_side, save_model
from methods.fourier_mamba.train import TrainResult, train_model, training_set

# spec §4: Restormer (CVPR 2022), recalled by the spec's author and flagged "to be re-checked"
RESTORMER = {"Rain100L": (38.99, 0.978), "Rain100H": (31.46, 0.904), "Test100": (32.00, 0.923)}


def _median_baseline(xs: np.ndarray, ys: np.ndarray) -> list[PairScores]:
    """A 3×3 median filter per channel: the classic no-learning streak remover, for context."""
    out = []
    for i in range(len(xs)):
        x = to_hwc(xs[i])
        out.append(score_pair(f"crop{i}", x, to_hwc(ys[i]), median_filter(x, size=(3, 3, 1))))
    return out


def _grid(rows: list[list[np.ndarray]]) -> np.ndarray:
    pad = 4
    h = max(im.shape[0] for r in rows for im in r)
    lines = []
    for r in rows:
        cells = []
        for im in r:
            cell = np.ones((h, im.shape[1], 3), np.float32)
            cell[: im.shape[0]] = im
            cells += [cell, np.ones((h, pad, 3), np.float32)]
        lines += [np.concatenate(cells[:-1], axis=1), None]
    width = max(x.shape[1] for x in lines if x is not None)
    stacked = []
    for x in lines[:-1]:
        if x is None:
            stacked.append(np.ones((pad, width, 3), np.float32))
        else:
            stacked.append(np.pad(x, ((0, 0), (0, width - x.shape[1]), (0, 0)), constant_values=1.0))
    return np.concatenate(stacked, axis=0)


def _loss_figure(curves: dict[str, list[float]]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    for name, losses in curves.items():
        k = max(1, len(losses) // 30)
        smooth = np.convolve(losses, np.ones(k) / k, mode="valid")
        ax.plot(np.arange(len(smooth)) + k - 1, smooth, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("L1 + 0.1·L1(|FFT|) (moving mean)")
    ax.set_yscale("log")
    ax.legend()
    return fig


def run_reproduction(
    preset: Preset, *, n_eval: int, eval_crop: int, ablation: bool, progress: JobContext, real_max_side: int = 0
) -> Report:
    """Train zigzag (and raster) FourierMamba, score held-out synthetic crops and the real Rain100L pairs."""
    t_start = time.perf_counter()
    data_dir = Path(get_settings().data_dir)
    rs = training_set(preset.train, data_dir)
    orders = ["zigzag", "raster"] if ablation else ["zigzag"]
    results: dict[str, TrainResult] = {}
    for i, order in enumerate(orders):
        sub = progress.sub(i / len(orders) * 0.85, (i + 1) / len(orders) * 0.85)
        results[order] = train_model(
            preset.with_model(scan_order=order).model, preset.train, data_dir, progress=sub, rain_set=rs
        )
    save_model(results["zigzag"], preset.train, checkpoint_path(preset.name, "zigzag"))

    progress(0.86, "evaluating held-out synthetic crops")
    xs, ys = heldout_crops(rs, n_eval, eval_crop, preset.train.seed)
    crop_scores = {o: evaluate_crops(r.model, xs, ys) for o, r in results.items()}
    crop_summary = {o: summarize(s) for o, s in crop_scores.items()}
    median = summarize(_median_baseline(xs, ys))

    progress(0.93, "evaluating the real Rain100L pairs")
    pairs = rain100l_pairs(data_dir)
    if real_max_side:
        pairs = [(n, fit_side(r, real_max_side), fit_side(c, real_max_side)) for n, r, c in pairs]
    real: dict[str, list[PairScores]] = {o: [] for o in results}
    outputs: dict[str, dict[str, np.ndarray]] = {o: {} for o in results}
    for name, rainy, clean in pairs:
        for o, r in results.items():
            out = derain_np(r.model, rainy)
            outputs[o][name] = out
            real[o].append(score_pair(name, rainy, clean, out))
    real_summary = {o: summarize(s) for o, s in real.items() if s}

    zz = crop_summary["zigzag"]
    report = Report(
        title="FourierMamba deraining — CPU-scale reproduction",
        summary=(
            f"FourierMamba-Tiny ({count_params(results['zigzag'].model):,} parameters) trained "
            f"{preset.train.steps} steps on synthetic rain: held-out synthetic crops PSNR(Y) "
            f"{zz['psnr_in']:.2f} → {zz['psnr_out']:.2f} dB (gain {zz['psnr_gain']:+.2f} ± {zz['psnr_gain_ci95']:.2f})"
            + (
                f"; real Rain100L pairs {real_summary['zigzag']['psnr_in']:.2f} → "
                f"{real_summary['zigzag']['psnr_out']:.2f} dB."
                if "zigzag" in real_summary
                else "; Rain100L sample not found."
            )
        ),
    )
    m = report.metrics
    m.update({f"heldout_{k}": v for k, v in zz.items()})
    if "zigzag" in real_summary:
        m.update({f"rain100l_{k}": v for k, v in real_summary["zigzag"].items()})
    if ablation:
        m["heldout_psnr_out_raster"] = crop_summary["raster"]["psnr_out"]
    m["params"] = count_params(results["zigzag"].model)
    m["train_seconds_zigzag"] = round(results["zigzag"].seconds, 1)
    m["total_seconds"] = round(time.perf_counter() - t_start, 1)
    m.update(device_provenance(preset.train.device, preset.train.amp))  # where the models trained

    rows = [["rainy input (identity)", zz["psnr_in"], zz["ssim_in"], "", ""]]
    rows.append(["3×3 median filter", median["psnr_out"], median["ssim_out"], median["psnr_gain"], ""])
    for o, s in crop_summary.items():
        rows.append([f"FourierMamba-Tiny, {o} scan", s["psnr_out"], s["ssim_out"], s["psnr_gain"], s["psnr_gain_ci95"]])
    report.add_table(
        f"Held-out synthetic crops ({n_eval} crops of {eval_crop}×{eval_crop}, right quarter of each image, "
        f"{preset.train.rain} rain)",
        ["method", "PSNR(Y) dB", "SSIM(Y)", "gain over input dB", "±95% CI"],
        rows,
    )
    real_rows = []
    for k, (name, _, _) in enumerate(pairs):
        row: list[Any] = [name, real["zigzag"][k].psnr_in, real["zigzag"][k].ssim_in]
        for o in results:
            row += [real[o][k].psnr_out, real[o][k].ssim_out]
        real_rows.append(row)
    if real_rows:
        means: list[Any] = ["mean", real_summary["zigzag"]["psnr_in"], real_summary["zigzag"]["ssim_in"]]
        for o in results:
            means += [real_summary[o]["psnr_out"], real_summary[o]["ssim_out"]]
        real_rows.append(means)
        cols = ["pair", "input PSNR", "input SSIM"]
        for o in results:
            cols += [f"{o} PSNR", f"{o} SSIM"]
        size = f"downscaled to a longest side of {real_max_side} px" if real_max_side else "full images"
        report.add_table(f"Real Rain100L pairs ({size}, PSNR/SSIM on Y)", cols, real_rows)
    report.add_table(
        "Paper-scale reference (spec §4; not comparable: Rain13K training, full-size network)",
        ["set", "Restormer PSNR/SSIM (spec, to re-check)", "FourierMamba (paper Table 1)", "ours (this run)"],
        [
            [
                "Rain100L",
                "38.99/0.978",
                "not retrievable here",
                (
                    f"{real_summary['zigzag']['psnr_out']:.2f}/{real_summary['zigzag']['ssim_out']:.3f} (3 images)"
                    if "zigzag" in real_summary
                    else "n/a"
                ),
            ],
            ["Rain100H", "31.46/0.904", "not retrievable here", "not run (no data)"],
            ["Test100", "32.00/0.923", "not retrievable here", "not run (no data)"],
        ],
    )

    n_show = min(4, len(xs))
    crop_rows = []
    for i in range(n_show):
        with torch.no_grad():
            outs = [evaluate_crops_image(r.model, xs[i]) for r in results.values()]
        crop_rows.append([to_hwc(xs[i]), *outs, to_hwc(ys[i])])
    report.add_image(
        "heldout_examples.png",
        _grid(crop_rows),
        caption="held-out crops: input | " + " | ".join(results) + " | ground truth",
    )
    if pairs:
        name, rainy, clean = pairs[0]
        report.add_image(
            "rain100l_example.png",
            _grid([[rainy, *[outputs[o][name] for o in results], clean]]),
            caption=f"Rain100L {name}: input | " + " | ".join(results) + " | ground truth",
        )
    report.add_figure("loss.png", _loss_figure({o: r.losses for o, r in results.items()}), caption="training loss")

    report.add_section("Setup", _setup_markdown(preset, rs.names, n_eval, eval_crop, results))
    paired = None
    if ablation:
        d = np.array(
            [a.psnr_out - b.psnr_out for a, b in zip(crop_scores["zigzag"], crop_scores["raster"], strict=True)]
        )
        paired = (float(d.mean()), normal_half_width(d))
        m["zigzag_minus_raster_db"] = paired[0]
        m["zigzag_minus_raster_ci95"] = paired[1]
    improved = (sum(p.psnr_out > p.psnr_in for p in real["zigzag"]), len(real["zigzag"])) if real["zigzag"] else None
    report.add_section("Reading", _reading(crop_summary, real_summary, median, paired, improved))
    report.data = {
        "heldout": crop_summary,
        "rain100l": {o: [s.__dict__ for s in v] for o, v in real.items()},
        "median_baseline": median,
        "losses": {o: r.losses for o, r in results.items()},
    }
    progress(1.0, "done")
    return report


def evaluate_crops_image(model, x: np.ndarray) -> np.ndarray:
    from methods.fourier_mamba.model import derain_image

    return to_hwc(derain_image(model, torch.from_numpy(x)))


def _setup_markdown(preset: Preset, names: list[str], n_eval: int, eval_crop: int, results: dict) -> str:
    mc, tc = preset.model, preset.train
    secs = ", ".join(f"{o} {r.seconds:.0f} s" for o, r in results.items())
    return "\n".join(
        [
            f"- Preset `{preset.name}`; threads pinned to {tc.threads or 'default'}; training time: {secs} (a shared "
            "CPU: other jobs ran at the same time).",
            f"- {provenance_line()}",
            f"- Network: C = {mc.channels}, levels {list(mc.blocks)} blocks (decoder mirrors the encoder), "
            f"d_state {mc.d_state}, expand {mc.expand}, spectrum as {mc.spectrum.replace('_', '/')}, "
            f"selective scan `{mc.scan_impl}` (chunked PyTorch on CPU).",
            f"- Training: {tc.steps} AdamW steps, batch {tc.batch_size}, {tc.crop}×{tc.crop} crops with flips, "
            f"lr {tc.lr:g} (warm-up {tc.warmup}, cosine to {tc.lr * tc.min_lr_ratio:.1g}), wd {tc.weight_decay:g}, "
            f"loss L1 + {tc.freq_weight:g}·L1(|FFT|), seed {tc.seed}.",
            f"- Data: synthetic {tc.rain} rain (spec §5 generator) on {len(names)} full images "
            f"({tc.variants} seeded rain variants of each of: "
            + ", ".join(sorted({n.split("#")[0] for n in names}))
            + "). Training crops come from the left three quarters of each image; the "
            f"{n_eval} evaluation crops ({eval_crop}×{eval_crop}) from the right quarter.",
            "- The Rain100L ground truths are training backgrounds (as the spec prescribes), so the real-pair numbers "
            "measure removal of real rain on scenes whose clean version was seen under synthetic rain"
            + ("." if tc.rain100l_targets else " — switched off in this run (`rain100l_targets=false`)."),
            "- What was shrunk from the paper: data (Rain13K's 13,712 pairs → synthetic rain on "
            f"{len(set(n.split('#')[0] for n in names))} photos), width (C 32/48 → {mc.channels}), depth "
            f"(4 levels [2,3,3,4] → {len(mc.blocks)} levels {list(mc.blocks)}), d_state (16 → {mc.d_state}), "
            f"training (paper: hundreds of thousands of iterations; here {tc.steps} steps on {tc.crop}×{tc.crop} "
            "crops). Kept: FFT → zigzag selective scan → inverse FFT, the channel-spectrum scan, pixel + "
            "frequency loss, PSNR/SSIM on Y.",
        ]
    )


def _reading(
    crop: dict, real: dict, median: dict, paired: tuple[float, float] | None, real_improved: tuple[int, int] | None
) -> str:
    zz = crop["zigzag"]
    parts = []
    ok3 = zz["psnr_gain"] >= 3.0
    parts.append(
        f"On held-out synthetic crops the network gains {zz['psnr_gain']:+.2f} dB PSNR(Y) over the rainy input "
        f"(95 % CI ±{zz['psnr_gain_ci95']:.2f}); the spec's check (≥ 3 dB after 5 minutes of training) "
        + ("holds." if ok3 else "does not hold at this budget.")
        + f" A 3×3 median filter gains {median['psnr_gain']:+.2f} dB on the same crops."
    )
    if "zigzag" in real:
        r = real["zigzag"]
        better = r["psnr_out"] > r["psnr_in"]
        per_pair = f" ({real_improved[0]} of {real_improved[1]} pairs improve individually)" if real_improved else ""
        parts.append(
            f"On the 3 real Rain100L pairs the mean PSNR(Y) goes {r['psnr_in']:.2f} → {r['psnr_out']:.2f} dB "
            f"(SSIM {r['ssim_in']:.3f} → {r['ssim_out']:.3f}): the output "
            + ("exceeds" if better else "does not exceed")
            + f" the input on average (§7.5 asks that it does){per_pair}. Three images are an anecdote, not a benchmark, and far below the "
            "paper-scale numbers (Rain100L ≈ 39 dB for Restormer), which need Rain13K and a full-size network."
        )
    if paired is not None:
        rz, rr = crop["zigzag"]["psnr_out"], crop["raster"]["psnr_out"]
        diff, ci = paired
        parts.append(
            f"Zigzag vs raster scan order (same data, seed and steps): {rz:.2f} vs {rr:.2f} dB on held-out crops, "
            f"paired difference {diff:+.2f} ± {ci:.2f} dB (95 % CI over crops, one training seed per arm). "
            + (
                "The interval contains 0: at this scale the scan order is not shown to matter, so the paper's claim "
                "that zigzag helps is neither confirmed nor refuted here."
                if abs(diff) <= ci
                else f"The interval excludes 0 ({'zigzag' if diff > 0 else 'raster'} ahead), but with one training "
                "seed per arm this is informative only (spec §7.5): seed-to-seed spread is not in the interval."
            )
        )
    return "\n\n".join(parts)
