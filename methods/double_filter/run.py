"""The Double-Filter experiment end to end: pretrained VLP → §7 checks 1–4 → every (task, seed) → figures → report.

Everything with tensors runs on ``options.device`` (cpu | auto | cuda; ``amp`` for fine-tuning); the
report records where.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from core.jobs import JobContext, Report


def run_reproduction(options: Any, progress: JobContext) -> Report:
    from core.device import device_provenance, resolve_device
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
    dev = resolve_device(getattr(options, "device", "cpu"))
    amp = getattr(options, "amp", "off")
    with pin_threads(options.threads):
        pre, tok, info = get_pretrained(options.backbone, progress=progress.sub(0.0, 0.1), device=dev, amp=amp)
        info["n_scenes"] = BACKBONES[options.backbone].train.n_scenes
        progress(0.1, "§7 checks 1–4")
        checks = structural_checks(pre, tok, rho=options.rho)
        plan = [(t, s) for s in range(options.seeds) for t in options.tasks]
        runs = []
        for i, (task, seed) in enumerate(plan):
            sub = progress.sub(0.12 + 0.85 * i / len(plan), 0.12 + 0.85 * (i + 1) / len(plan))
            sub(0.0, f"{task} seed {seed}")
            runs.append(_cached_run(task, seed, pre, tok, options, info, sub, run_task, amp=amp))
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
    report = build_report(options, runs, checks, info, figs)
    report.metrics.update(device_provenance(dev, amp))
    return report


RUN_FIELDS = ("rho", "r_fg", "tau", "score_layers", "detector", "backbone", "steps", "batch_size", "lr", "n_train",
              "n_val", "n_test", "gamma", "population", "generations", "max_drop", "directional")  # fmt: skip


def _cached_run(
    task: str, seed: int, pre, tok, options: Any, info: dict, progress, run_task, *, amp: str = "off"
) -> dict:
    """One (task, seed) run, stored under ``<cache_dir>/double_filter/runs`` keyed by every option that changes it
    and the pretrained weights' folder: a re-run (or a run resumed after a crash) reuses finished (task, seed)s.

    Runs off the CPU (or in bf16) are keyed by their device and precision too (their scores and latencies are
    their own); CPU fp32 runs keep the keys they always had.
    """
    from core.config import get_settings

    key = {f: getattr(options, f) for f in RUN_FIELDS} | {"task": task, "seed": seed, "weights": info.get("folder")}
    dev = next(pre.parameters()).device
    if dev.type != "cpu" or amp != "off":
        key |= {"device": dev.type, "amp": amp}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]
    path = Path(get_settings().cache_dir) / "double_filter" / "runs" / f"{task}-{seed}-{digest}.json"
    if path.is_file():
        progress(1.0, f"{task} seed {seed}: stored run reused")
        return json.loads(path.read_text())
    result = run_task(task, seed, pre, tok, options, progress, amp=amp)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(result))
    tmp.replace(path)
    return result
