"""The Double-Filter experiment end to end: pretrained VLP → §7 checks 1–4 → every (task, seed) → figures → report."""

from __future__ import annotations

import time
from typing import Any

from core.jobs import JobContext, Report


def run_reproduction(options: Any, progress: JobContext) -> Report:
    from core.train import pin_threads
    from methods.double_filter import ipf
    from methods.double_filter.checks import structural_checks
    from methods.double_filter.config import BACKBONES
    from methods.double_filter.experiment import run_task
    from methods.double_filter.plots import fitness_curves, overlay, score_vs_cost
    from methods.double_filter.pretrain import get_pretrained
    from methods.double_filter.report import METRIC, aggregate, build_report
    from methods.double_filter.tasks import scenes

    t0 = time.perf_counter()
    with pin_threads(options.threads):
        pre, tok, info = get_pretrained(options.backbone, progress=progress.sub(0.0, 0.1))
        info["n_scenes"] = BACKBONES[options.backbone].train.n_scenes
        progress(0.1, "§7 checks 1–4")
        checks = structural_checks(pre, tok, rho=options.rho)
        plan = [(t, s) for s in range(options.seeds) for t in options.tasks]
        runs = []
        for i, (task, seed) in enumerate(plan):
            sub = progress.sub(0.12 + 0.85 * i / len(plan), 0.12 + 0.85 * (i + 1) / len(plan))
            sub(0.0, f"{task} seed {seed}")
            runs.append(run_task(task, seed, pre, tok, options, sub))
        _, imgs, gt = scenes("test", 6)
        boxes = ipf.detect_all(ipf.make_detector(options.detector, pre.cfg.image_size), imgs, gt)
        keep, fgs = ipf.ipf_keep(pre, imgs, boxes, options.rho, r_fg=options.r_fg, tau=options.tau,
                                 score_layers=options.score_layers)  # fmt: skip
    summary = aggregate(runs)
    curves = [dict(r["ga"], label=f"{r['task']} seed {r['seed']}") for r in runs]
    figs = {
        "score_vs_cost.png": (score_vs_cost(summary, METRIC), "score vs analytic FLOPs and measured latency per arm"),
        "ga_fitness.png": (fitness_curves(curves), "GA fitness per generation (best so far and population mean)"),
        "kept_patches.png": (
            overlay(imgs.numpy(), keep.numpy(), fgs, boxes, pre.cfg.patch_size),
            f"IPF at ρ = {options.rho}: kept patches on six test scenes",
        ),
    }
    info["total_seconds"] = time.perf_counter() - t0
    return build_report(options, runs, checks, info, figs)
