"""FourierMamba Reports: one derained image, and the reproduction (headline claims first, then the tables).

Builds Reports from results and nothing else: the runs are in :mod:`methods.fourier_mamba.experiment`.
The reproduction's headlines (spec §7.5) are computed by :mod:`core.evidence` from the raw per-seed and
per-crop values, which go to ``results.json`` with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.evidence import Evidence
from core.jobs import Report
from core.stats import mean_sd
from methods.fourier_mamba.config import Preset

# spec §4: Restormer (CVPR 2022), recalled by the spec's author and flagged "to be re-checked"
RESTORMER = {"Rain100L": (38.99, 0.978), "Rain100H": (31.46, 0.904), "Test100": (32.00, 0.923)}
GAIN_TARGET = 3.0  # spec §7.5: held-out PSNR(Y) gain over the rainy input after ≥ 5 min of training


def derain_report(
    name: str,
    img: np.ndarray,
    out: np.ndarray,
    gt: np.ndarray | None,
    scores: dict[str, float] | None,
    *,
    rain: str | None,
    meta: dict[str, Any],
    data: dict[str, Any],
) -> Report:
    """One derained image: input, output (and ground truth with PSNR/SSIM(Y) when there is one)."""
    report = Report(title=f"FourierMamba deraining: {name}")
    report.add_image("input.png", img, caption="input")
    report.add_image("output.png", out, caption="FourierMamba output")
    panels = ["![input](artifact:input.png)", "![output](artifact:output.png)"]
    if gt is not None and scores is not None:
        report.add_image("ground_truth.png", gt, caption="ground truth")
        panels.append("![ground truth](artifact:ground_truth.png)")
        report.metrics.update(scores)
        report.summary = (
            f"PSNR(Y) {scores['psnr_y_input']:.2f} → {scores['psnr_y_output']:.2f} dB, "
            f"SSIM(Y) {scores['ssim_y_input']:.4f} → {scores['ssim_y_output']:.4f} "
            f"({'synthetic ' + rain + ' rain' if rain else 'real rain'} vs its clean image)."
        )
    else:
        report.summary = "No ground truth for this image: output shown without scores."
    report.add_section("input | output" + (" | ground truth" if gt is not None else ""), " ".join(panels))
    report.metrics.update(meta)
    report.data = data
    return report


def evidence(raw: dict[str, Any]) -> Evidence:
    """The headline claims of spec §7.5 over the raw values (t over training seeds or pairs, bootstrap over crops)."""
    ev = Evidence(raw)
    crops = raw["crops"]
    median_gain = float(np.mean(np.asarray(crops["median_psnr_out"]) - np.asarray(crops["psnr_in"])))
    ev.headline(
        f"Held-out PSNR(Y) gain over the rainy input ≥ {GAIN_TARGET:g} dB (spec §7.5)", stat="mean", a="zigzag/gain",
        null=GAIN_TARGET, paper="≥ 3 dB after 5 min of training (spec §7.5; not a paper number)", unit="dB",
        context=f"rainy input {np.mean(crops['psnr_in']):.2f} dB; 3×3 median filter {median_gain:+.2f} dB",
    )  # fmt: skip
    ev.headline(
        "FourierMamba beats a 3×3 median filter on held-out crops", stat="paired_diff", a="crops/zigzag_psnr_out",
        b="crops/median_psnr_out", interval="bootstrap", paper="— (context baseline)", unit="dB PSNR(Y)",
        context=f"median filter {np.mean(crops['median_psnr_out']):.2f} dB (per crop, mean over seeds)",
    )  # fmt: skip
    real = raw.get("rain100l", {})
    if real.get("zigzag_psnr_out"):
        ev.headline(
            "Real Rain100L pairs: output PSNR(Y) above the rainy input (spec §7.5)", stat="paired_diff",
            a="rain100l/zigzag_psnr_out", b="rain100l/psnr_in", unit="dB",
            paper="output > input; paper scale: Restormer 38.99 dB on Rain100L (spec §4)",
            context=f"input {np.mean(real['psnr_in']):.2f} dB over {len(real['psnr_in'])} pairs (mean over seeds)",
        )  # fmt: skip
    if "raster" in raw:
        ev.headline(
            "Zigzag scan ≥ raster scan (held-out PSNR(Y), paired by seed)", stat="paired_diff", a="zigzag/psnr_out",
            b="raster/psnr_out", unit="dB",
            paper="zigzag ahead (paper's ablation; spec §7.5: informative at tiny scale)",
            context=f"raster {np.mean(raw['raster']['psnr_out']):.2f} dB",
        )  # fmt: skip
    return ev


def _grid(rows: list[list[np.ndarray]]) -> np.ndarray:
    pad = 4
    h = max(im.shape[0] for r in rows for im in r)
    lines: list[np.ndarray | None] = []
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


def _loss_figure(curves: dict[str, list[float]]) -> Any:
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


def _ms(values: list[float], digits: int = 2) -> str:
    return mean_sd(values).format(digits)


def reproduction_report(
    preset: Preset,
    raw: dict[str, Any],
    info: dict[str, Any],
    *,
    examples: list[list[np.ndarray]],
    real_example: tuple[str, list[np.ndarray]] | None,
    losses: dict[str, list[float]],
) -> Report:
    """The headline table first (``core.evidence``), then held-out crops, per-seed runs, real pairs, setup and Reading;
    ``results.json`` holds every seed's per-crop and per-pair scores with the headline specs."""
    ev = evidence(raw)
    orders = [o for o in ("zigzag", "raster") if o in raw]
    seeds = raw["seeds"]
    crops = raw["crops"]
    counts = ev.counts()
    zz = raw["zigzag"]
    report = Report(
        title="FourierMamba deraining — CPU-scale reproduction",
        summary=(
            f"FourierMamba-Tiny ({info['params']:,} parameters), {len(orders)} scan order(s) × {len(seeds)} training "
            f"seed(s), {preset.train.steps} steps on {preset.train.crop}×{preset.train.crop} crops "
            f"({_ms(zz['train_s'], 0)} s of training per model): held-out PSNR(Y) gain {_ms(zz['gain'])} dB over "
            f"the rainy input (spec §7.5 asks ≥ {GAIN_TARGET:g}). Headline claims: {counts['holds']} hold, "
            f"{counts['fails']} fail, {counts['not resolved']} not resolved."
        ),
    )
    report.sections.append(ev.section())
    report.add_section("Reading", _reading(ev, raw, preset))
    rows: list[list[Any]] = [
        ["rainy input (identity)", f"{np.mean(crops['psnr_in']):.2f}", f"{np.mean(crops['ssim_in']):.4f}", "—"],
        [
            "3×3 median filter",
            f"{np.mean(crops['median_psnr_out']):.2f}",
            f"{np.mean(crops['median_ssim_out']):.4f}",
            f"{np.mean(np.asarray(crops['median_psnr_out']) - np.asarray(crops['psnr_in'])):+.2f}",
        ],
    ]
    for o in orders:
        rows.append([f"FourierMamba-Tiny, {o} scan", _ms(raw[o]["psnr_out"]), _ms(raw[o]["ssim_out"], 4),
                     _ms(raw[o]["gain"])])  # fmt: skip
    report.add_table(
        f"Held-out synthetic crops ({info['n_eval']} crops of {info['eval_crop']}×{info['eval_crop']}, right quarter "
        f"of each image, {preset.train.rain} rain): mean ± sd over {len(seeds)} training seed(s)",
        ["method", "PSNR(Y) dB", "SSIM(Y)", "gain over input dB"],
        rows,
    )
    per_seed = []
    for o in orders:
        for r, gain in zip(raw[o]["runs"], raw[o]["gain"], strict=True):
            per_seed.append([o, r["seed"], r["train_s"], f"{r['final_loss']:.4f}", f"{np.mean(r['crop_psnr_out']):.2f}",
                             f"{gain:+.2f}", f"{np.mean(r['real_psnr_out']):.2f}" if r["real_psnr_out"] else "—"])  # fmt: skip
    report.add_table(
        "Every trained model (the per-seed values of the headlines)",
        ["scan", "seed", "train s", "final loss (last 10)", "held-out PSNR(Y)", "gain dB", "Rain100L PSNR(Y)"],
        per_seed,
        note="Seeds vary the initialisation and the training crops; the rain set and the held-out crops are fixed.",
    )
    real = raw.get("rain100l", {})
    if real.get("names"):
        cols = ["pair", "input PSNR", "input SSIM"]
        for o in orders:
            cols += [f"{o} PSNR", f"{o} SSIM"]
        real_rows = []
        for i, name in enumerate(real["names"]):
            row: list[Any] = [name, f"{real['psnr_in'][i]:.2f}", f"{real['ssim_in'][i]:.4f}"]
            for o in orders:
                row += [f"{real[f'{o}_psnr_out'][i]:.2f}", f"{real[f'{o}_ssim_out'][i]:.4f}"]
            real_rows.append(row)
        mean_row: list[Any] = ["mean", f"{np.mean(real['psnr_in']):.2f}", f"{np.mean(real['ssim_in']):.4f}"]
        for o in orders:
            mean_row += [f"{np.mean(real[f'{o}_psnr_out']):.2f}", f"{np.mean(real[f'{o}_ssim_out']):.4f}"]
        real_rows.append(mean_row)
        size = f"downscaled to a longest side of {info['real_max_side']} px" if info["real_max_side"] else "full images"
        report.add_table(
            f"Real Rain100L pairs ({size}, PSNR/SSIM on Y; outputs: mean over {len(seeds)} seed(s))", cols, real_rows
        )
    ours_real = (
        f"{np.mean(real['zigzag_psnr_out']):.2f}/{np.mean(real['zigzag_ssim_out']):.3f} ({len(real['names'])} images)"
        if real.get("zigzag_psnr_out")
        else "n/a"
    )
    report.add_table(
        "Paper-scale reference (spec §4; not comparable: Rain13K training, full-size network)",
        ["set", "Restormer PSNR/SSIM (spec, to re-check)", "FourierMamba (paper Table 1)", "ours (this run)"],
        [
            ["Rain100L", "38.99/0.978", "not retrievable here", ours_real],
            ["Rain100H", "31.46/0.904", "not retrievable here", "not run (no data)"],
            ["Test100", "32.00/0.923", "not retrievable here", "not run (no data)"],
        ],
    )
    if examples:
        report.add_image(
            "heldout_examples.png",
            _grid(examples),
            caption=f"held-out crops (seed {seeds[0]}): input | " + " | ".join(orders) + " | ground truth",
        )
    if real_example is not None:
        name, panels = real_example
        report.add_image(
            "rain100l_example.png",
            _grid([panels]),
            caption=f"Rain100L {name} (seed {seeds[0]}): input | " + " | ".join(orders) + " | ground truth",
        )
    if losses:
        report.add_figure("loss.png", _loss_figure(losses), caption=f"training loss (seed {seeds[0]})")
    report.add_section("Setup", _setup_markdown(preset, raw, info))
    report.add_section(
        "Command",
        f"`{info['command'] or 'paperworks reproduce fourier_mamba'}` — {info['seconds']:.0f} s "
        f"({info['seconds'] / 60:.1f} min) in all, training seeds {', '.join(map(str, seeds))}"
        + (" (some models from the cache of an earlier run of the same command)" if _any_cached(raw) else "")
        + f". {info['machine']}",
    )
    report.add_json(
        "results.json",
        ev.to_json(options={"preset": preset.name, "train": preset.train.to_dict(), "model": preset.model.to_dict()},
                   info={k: v for k, v in info.items() if k != "names"}),
        caption="per-seed, per-crop and per-pair scores and the headline specs",
    )  # fmt: skip
    m = report.metrics
    m["heldout_psnr_gain"] = float(np.mean(zz["gain"]))
    m["params"] = info["params"]
    m["train_seconds_zigzag"] = float(np.mean(zz["train_s"]))
    m["total_seconds"] = info["seconds"]
    m.update({k: info[k] for k in ("device", "dtype", "gpu") if k in info})
    report.data = {"raw": raw, "verdicts": {h.claim: h.result for h in ev.headlines}}
    return report


def _any_cached(raw: dict[str, Any]) -> bool:
    return any(r.get("cached") for o in ("zigzag", "raster") if o in raw for r in raw[o]["runs"])


def _setup_markdown(preset: Preset, raw: dict[str, Any], info: dict[str, Any]) -> str:
    mc, tc = preset.model, preset.train
    names = info["names"]
    secs = "; ".join(f"{o} {_ms(raw[o]['train_s'], 0)} s" for o in ("zigzag", "raster") if o in raw)
    return "\n".join(
        [
            f"- Preset `{preset.name}`; threads {tc.threads or 'torch default'}; training time per model (mean ± sd "
            f"over seeds): {secs} (a shared CPU: other work ran at the same time).",
            f"- Network: C = {mc.channels}, levels {list(mc.blocks)} blocks (decoder mirrors the encoder), "
            f"d_state {mc.d_state}, expand {mc.expand}, spectrum as {mc.spectrum.replace('_', '/')}, "
            f"selective scan `{mc.scan_impl}` (the fused C++ kernel on the CPU, Triton on CUDA).",
            f"- Training: {tc.steps} AdamW steps, batch {tc.batch_size}, {tc.crop}×{tc.crop} crops with flips, "
            f"lr {tc.lr:g} (warm-up {tc.warmup}, cosine to {tc.lr * tc.min_lr_ratio:.1g}), wd {tc.weight_decay:g}, "
            f"loss L1 + {tc.freq_weight:g}·L1(|FFT|); training seeds {', '.join(map(str, raw['seeds']))} (the "
            f"initialisation and the crops), data seed {tc.seed}.",
            f"- Data: synthetic {tc.rain} rain (spec §5 generator) on {len(names)} full images "
            f"({tc.variants} seeded rain variants of each of: "
            + ", ".join(sorted({n.split("#")[0] for n in names}))
            + "). Training crops come from the left three quarters of each image; the "
            f"{info['n_eval']} evaluation crops ({info['eval_crop']}×{info['eval_crop']}) from the right quarter.",
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


SPEC_MINUTES = 5.0  # spec §6/§7.5: the ≥ 3 dB check after 5 minutes of training on 2 cores
SPEC_CROPS = 2000  # spec §6: about 2,000 crops of 64×64, batch 8


def _reading(ev: Evidence, raw: dict[str, Any], preset: Preset) -> str:
    """The verdicts in words, each with its baseline."""
    by = {h.claim: h.result for h in ev.headlines}
    h = ev.headlines
    gain = h[0].result
    crops = raw["crops"]
    n_seeds = len(raw["seeds"])
    secs = float(np.mean(raw["zigzag"]["train_s"]))
    crops_seen = preset.train.steps * preset.train.batch_size
    budget = (
        f"{secs:.0f} s of training per model on this shared CPU, {crops_seen:,} training crops; the spec asks for "
        f"≥ {SPEC_MINUTES:g} min"
        + (
            ": met"
            if secs >= 60 * SPEC_MINUTES
            else f", which this run does not reach; the spec's minutes are its estimate of how long its ~{SPEC_CROPS:,} "
            "crops at 64×64 take, and "
            + ("this run trains on at least that many, so the check is made at the spec's data budget (or beyond it) in "
                "less time"
               if crops_seen >= SPEC_CROPS and preset.train.crop >= 64
               else "this run trains on fewer or smaller crops (the spec's budget: `-o preset=spec`)")
        )
    )  # fmt: skip
    parts = [
        f"After {preset.train.steps} steps on {preset.train.crop}×{preset.train.crop} crops ({budget}), "
        f"FourierMamba-Tiny gains {gain['estimate']:+.2f} dB "
        f"PSNR(Y) over the rainy input on held-out crops (95 % t interval over {n_seeds} seeds "
        f"[{gain['low']:+.2f}, {gain['high']:+.2f}]): the spec's ≥ {GAIN_TARGET:g} dB check {_says(gain['verdict'])}. "
        f"A 3×3 median filter gains "
        f"{np.mean(np.asarray(crops['median_psnr_out']) - np.asarray(crops['psnr_in'])):+.2f} dB on the same crops; "
        f"the network against it: {h[1].result['estimate']:+.2f} dB ({h[1].result['verdict']})."
    ]
    real_claim = next((c for c in by if c.startswith("Real Rain100L")), None)
    if real_claim:
        r = by[real_claim]
        real = raw["rain100l"]
        parts.append(
            f"On the {len(real['names'])} real Rain100L pairs the mean PSNR(Y) goes {np.mean(real['psnr_in']):.2f} → "
            f"{np.mean(real['zigzag_psnr_out']):.2f} dB (mean over seeds; per pair "
            + ", ".join(f"{a:.2f} → {b:.2f}" for a, b in zip(real["psnr_in"], real["zigzag_psnr_out"], strict=True))
            + f"): the claim that the output exceeds the input is {r['verdict']} (t interval over "
            f"{r['n']} pairs [{r['low']:+.2f}, {r['high']:+.2f}] dB). Three images are an anecdote, not a benchmark, and "
            "far below the paper-scale numbers (Rain100L ≈ 39 dB for Restormer), which need Rain13K and a full-size "
            "network."
        )
    zr = next((c for c in by if c.startswith("Zigzag")), None)
    if zr:
        r = by[zr]
        parts.append(
            f"Zigzag vs raster scan order ({n_seeds} training seeds, same data and steps): "
            f"{np.mean(raw['zigzag']['psnr_out']):.2f} vs {np.mean(raw['raster']['psnr_out']):.2f} dB on held-out "
            f"crops, paired difference {r['estimate']:+.2f} dB [{r['low']:+.2f}, {r['high']:+.2f}] (t over seeds): "
            + (
                "the paper's claim that zigzag helps holds here."
                if r["verdict"] == "holds"
                else "raster is ahead, against the paper's claim."
                if r["verdict"] == "fails"
                else "not resolved — at this scale the scan order is not shown to matter either way."
            )
        )
    return "\n\n".join(parts)


def _says(verdict: str) -> str:
    return {"holds": "holds", "fails": "fails (the interval lies below it)"}.get(
        verdict, "is not resolved (the interval straddles it)"
    )
