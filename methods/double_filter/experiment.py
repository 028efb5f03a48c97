"""The Double-Filter experiment: one (task, seed) in the spec §3.3 order, and the reproduction end to end.

:func:`run_task` — (1) fine-tune the full model (arm ``none``); (2) run the GA over layer genomes, fitness
F(g) = Acc_val(g) − γ·FLOPs(g)/FLOPs(1) with the fine-tuned weights as a zero-step proxy; (3) fine-tune
from the pretrained weights with the IPF patches (``ipf``), the GA mask (``alf``) and both (``both``);
(4) infer with the same patches and mask. With ``directional`` on VQA, the §7.5 baselines too: random
patches and foreground-first patches at the same ρ, and a random mask with the GA mask's number of zeros.
Every arm records its validation curve during fine-tuning (``curve_points`` measurements) and its
per-item test hits, from which the report's headline claims are computed.

:func:`run_reproduction` — pretrained VLP → §7 checks 1–4 → every (task, seed) (stored under the cache and
reused) → figures → report. Everything with tensors runs on ``options.device`` (cpu | auto | cuda; ``amp``
for fine-tuning); the report records where.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from core.config import get_settings
from core.device import device_provenance, resolve_device
from core.jobs import JobContext, Report, ReproducerOptions
from core.train import pin_threads
from methods.double_filter import ipf
from methods.double_filter.checks import structural_checks
from methods.double_filter.config import BACKBONES
from methods.double_filter.finetune import Arm, IPFConfig, arm_flops, detected_boxes, evaluate, finetune, keeps_for
from methods.double_filter.ga import GAConfig, random_mask, run_ga
from methods.double_filter.plots import fitness_curves, overlay, score_vs_cost, val_curves
from methods.double_filter.pretrain import get_pretrained
from methods.double_filter.report import METRIC, aggregate, build_report
from methods.double_filter.tasks import build, scenes


def _groups(model) -> list[str]:
    return [s.group for s in model.sublayers()]


def run_task(task: str, seed: int, pre, tok, opts: Any, progress, *, amp: str = "off") -> dict[str, Any]:
    """Every arm of ``task`` for ``seed``: scores, FLOPs, latency, the GA's curves and genome.

    Fine-tuning and evaluation run on ``pre``'s device (``amp``: bf16 autocast for fine-tuning).
    """
    ipfc = IPFConfig(r_fg=opts.r_fg, tau=opts.tau, score_layers=opts.score_layers, detector=opts.detector)
    data = {s: build(task, s, n) for s, n in (("train", opts.n_train), ("val", opts.n_val), ("test", opts.n_test))}
    t0 = time.perf_counter()
    boxes = {s: detected_boxes(d, opts.detector) for s, d in data.items()}
    det_s_per_image = (time.perf_counter() - t0) / sum(len(d) * (2 if task == "nlvr" else 1) for d in data.values())
    directional = opts.directional and task == "vqa"
    n_arms = 4 + (3 if directional else 0)
    done = [0]
    results: dict[str, dict] = {}

    eval_every = max(1, opts.steps // max(1, opts.curve_points)) if opts.curve_points else 0

    def run_arm(arm: Arm):
        sub = progress.sub(0.1 + 0.85 * done[0] / n_arms, 0.1 + 0.85 * (done[0] + 1) / n_arms)
        keep_tr, _ = keeps_for(arm, data["train"], pre, boxes["train"], ipfc, seed)
        keep_va, _ = keeps_for(arm, data["val"], pre, boxes["val"], ipfc, seed + 2) if eval_every else (None, 0.0)
        keep_te, sel_s = keeps_for(arm, data["test"], pre, boxes["test"], ipfc, seed + 1)
        tm = finetune(pre, tok, data["train"], keep_tr, arm.genome, steps=opts.steps, batch_size=opts.batch_size,
                      lr=opts.lr, seed=seed, amp=amp, progress=sub, val=data["val"] if eval_every else None,
                      val_keep=keep_va, eval_every=eval_every)  # fmt: skip
        ev = evaluate(tm, data["test"], tok, keep_te)
        fl = arm_flops(pre, task, arm, data["test"], tok, ipfc)
        per_image = 2 if task == "nlvr" else 1
        det = det_s_per_image * per_image * len(data["test"]) if arm.patches in ("ipf", "fg_only") else 0.0
        results[arm.name] = {
            "task": task, "seed": seed, "arm": arm.name, "patches": arm.patches, "rho": arm.rho,
            "genome": list(arm.genome) if arm.genome else None, "score": ev["score"], "per_kind": ev["per_kind"],
            "flops": fl, "latency_ms": 1000 * (ev["seconds"] + sel_s + det) / len(data["test"]),
            "model_ms": 1000 * ev["seconds"] / len(data["test"]),
            "kept": pre.n_patches if keep_te is None else int(keep_te.shape[-1]), "patches_total": pre.n_patches,
            "hits": ev["hits"], "kinds": list(data["test"].kinds), "val_curve": [list(p) for p in tm.curve],
            "loss_curve": _thin(tm.losses),
        }  # fmt: skip
        done[0] += 1
        return tm

    tm_full = run_arm(Arm("none"))
    n_genes = len(pre.sublayers())
    ga_cfg = GAConfig(population=opts.population, generations=opts.generations, seed=seed, max_drop=opts.max_drop)
    full_flops = arm_flops(pre, task, Arm("full"), data["val"], tok, ipfc)["total"]

    def fitness(g: tuple[int, ...]) -> float:
        tm_full.vlp.set_genome(g)
        acc = evaluate(tm_full, data["val"], tok, top_k=8)["score"]
        return acc - opts.gamma * arm_flops(pre, task, Arm("g", genome=g), data["val"], tok, ipfc)["total"] / full_flops

    lo = 0.1 + 0.85 / n_arms
    ga = run_ga(fitness, _groups(pre), ga_cfg, progress=progress.sub(lo, lo + 0.02))
    tm_full.vlp.set_genome([1] * n_genes)
    best = ga.best
    run_arm(Arm("ipf", "ipf", opts.rho))
    run_arm(Arm("alf", genome=best))
    run_arm(Arm("both", "ipf", opts.rho, best))
    if directional:
        run_arm(Arm("random_patches", "random", opts.rho))
        run_arm(Arm("fg_only", "fg_only", opts.rho))
        zeros = n_genes - sum(best)
        run_arm(Arm("random_mask", genome=random_mask(_groups(pre), zeros, seed + 100, opts.max_drop)))
    return {
        "task": task,
        "seed": seed,
        "arms": results,
        "ga": {
            "best": list(best),
            "best_fitness": ga.best_fitness,
            "best_curve": ga.best_curve,
            "mean_curve": ga.mean_curve,
            "evaluations": ga.evaluations,
            "population_best": ga.population_best,
            "config": asdict(ga_cfg),
            "sublayers": [s.name for s in pre.sublayers()],
        },
    }


def _thin(losses: list[float], points: int = 100) -> list[list[float]]:
    """``[[step, mean loss over the window ending there], ...]``: at most ``points`` points of a loss curve."""
    if not losses:
        return []
    w = max(1, len(losses) // points)
    return [[i + w, float(np.mean(losses[i : i + w]))] for i in range(0, len(losses) - w + 1, w)]


def run_reproduction(options: Any, progress: JobContext) -> Report:
    """The experiment end to end (the job ``double_filter.experiment`` and ``paperworks reproduce double_filter``):
    the pretrained VLP, §7 checks 1–4, every (task, seed) (stored and reused), the figures and the report."""
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
            runs.append(_cached_run(task, seed, pre, tok, options, info, sub, amp=amp))
        _, imgs, gt = scenes("test", 6)
        boxes = ipf.detect_all(ipf.make_detector(options.detector, pre.cfg.image_size), imgs, gt)
        keep, fgs = ipf.ipf_keep(pre, imgs, boxes, options.rho, r_fg=options.r_fg, tau=options.tau,
                                 score_layers=options.score_layers)  # fmt: skip
    summary = aggregate(runs)
    curves = [dict(r["ga"], label=f"{r['task']} seed {r['seed']}") for r in runs]
    figs = {
        "score_vs_cost.png": (score_vs_cost(summary, METRIC), "score vs analytic FLOPs and measured latency per arm"),
        "ga_fitness.png": (fitness_curves(curves), "GA fitness per generation (best so far and population mean)"),
        "val_curves.png": (
            val_curves(runs, METRIC),
            f"Validation score during fine-tuning, every arm (mean over seeds): {options.steps} steps each",
        ),
        "kept_patches.png": (
            overlay(imgs.numpy(), keep.numpy(), fgs, boxes, pre.cfg.patch_size),
            f"IPF at ρ = {options.rho}: kept patches on six test scenes",
        ),
    }
    info["total_seconds"] = time.perf_counter() - t0
    report = build_report(options, runs, checks, info, figs)
    if not isinstance(options, ReproducerOptions):
        report.metrics.update(device_provenance(dev, amp))
    return report


RUN_FIELDS = ("rho", "r_fg", "tau", "score_layers", "detector", "backbone", "steps", "batch_size", "lr", "n_train",
              "n_val", "n_test", "gamma", "population", "generations", "max_drop", "directional",
              "curve_points")  # fmt: skip
RUN_VERSION = 2  # 2: per-item test hits, validation and loss curves, the GA's population best


def _cached_run(task: str, seed: int, pre, tok, options: Any, info: dict, progress, *, amp: str = "off") -> dict:
    """One (task, seed) run, stored under ``<cache_dir>/double_filter/runs`` keyed by every option that changes it
    and the pretrained weights' folder: a re-run (or a run resumed after a crash) reuses finished (task, seed)s.

    Runs off the CPU (or in bf16) are keyed by their device and precision too (their scores and latencies are
    their own); CPU fp32 runs keep the keys they always had.
    """
    key = {f: getattr(options, f) for f in RUN_FIELDS} | {"task": task, "seed": seed, "weights": info.get("folder"),
                                                         "version": RUN_VERSION}  # fmt: skip
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
