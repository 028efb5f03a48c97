"""Registered job ``dor.tune`` (one calibrated prompt-tuning run) and the reproducer ``dor``.

Queue ``cpu``: image features are computed once by the frozen encoder; each step is a text-tower
pass over 10 class prompts and B = 64 outlier prompts through a tiny CLIP, milliseconds on a core.
``device`` / ``amp`` (:class:`core.device.DeviceParams`) put the backbone, the features and the
tuning there; the report records where it ran.
"""

from __future__ import annotations

import os
import platform
from typing import Literal

from pydantic import Field

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.dor.config import PRESETS, TaskConfig, TuneConfig


class TuneParams(TaskConfig, TuneConfig, DeviceParams):
    """A base-to-new task and one host (± DOR) on it."""

    seed: int = Field(
        1, ge=0, le=10_000, description="Seed of the few-shot draw, the context init and the outlier draws."
    )
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset (methods.vlm).")
    clip_dir: str | None = Field(
        None,
        max_length=200,
        description="A saved CLIPModel folder under <home>/models to use instead of the tiny CLIP.",
    )
    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_method(
    "dor.tune", title="DOR: calibrated prompt tuning", queue="cpu", tags=("vision-language", "calibration")
)
def run_tune(params: TuneParams, progress: JobContext) -> Report:
    """Tune CoOp or KgCoOp (± DOR's outlier regulariser) on the base classes; report base/new accuracy, ECE/ACE/MCE and reliability diagrams against zero-shot."""
    from core.device import device_provenance, resolve_device
    from core.train import pin_threads
    from methods.dor.experiment import get_backbone, outlier_pool
    from methods.dor.report import tune_report
    from methods.dor.tune import evaluate, make_task, tune

    dev = resolve_device(params.device)  # a cuda job on a worker without CUDA fails here, at once
    task_cfg = TaskConfig(**{k: getattr(params, k) for k in TaskConfig.model_fields})
    cfg = TuneConfig(**{k: getattr(params, k) for k in TuneConfig.model_fields})
    with pin_threads(params.threads):
        backbone = get_backbone(
            params.backbone, params.clip_dir, progress=progress.sub(0.0, 0.3), device=dev, amp=params.amp
        )
        progress(0.3, "encoding the few-shot task")
        task = make_task(backbone, task_cfg, seed=params.seed, views=cfg.views)
        pool = None
        if cfg.dor:
            progress(0.35, "scoring the WordNet outlier candidates")
            pool = outlier_pool(backbone, task, cfg)
        result = tune(
            backbone, task, cfg, pool, seed=params.seed, progress=progress.sub(0.4, 0.95), device=dev, amp=params.amp
        )
        zero = evaluate(backbone, task, None, n_bins=cfg.n_bins)
        tuned = evaluate(backbone, task, result.learner, n_bins=cfg.n_bins)
    tuned["losses"], tuned["parts"] = result.losses, result.parts
    conf = params.model_dump()
    report = tune_report(conf, zero, tuned, pool.words if pool else [], pool.scores if pool else [], result.sampled)
    report.metrics.update(device_provenance(dev, params.amp))
    return report


class DorOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce dor``."""

    PRESETS = PRESETS
    preset: Literal["quick", "default", "spec"] = Field(
        "default", description="quick (tests: tiny backbone, 1 seed), default (docs/results), spec (200 epochs)."
    )
    seeds: int = Field(3, ge=1, le=10, description="Seeds 1..seeds.")
    epochs: int = Field(100, ge=1, le=1000, description="Epochs per run (spec: 200).")
    backbone: Literal["default", "test"] = Field("default", description="Tiny-CLIP preset.")
    clip_dir: str | None = Field(None, max_length=200, description="A saved CLIPModel folder under <home>/models.")
    dataset: Literal["objects20", "objects", "digits"] = Field("objects20", description="methods.vlm dataset.")
    n_base: int = Field(10, ge=1, le=40, description="Base classes (first ids).")
    shots: int = Field(16, ge=1, le=32, description="Shots per base class.")
    outlier_k: int = Field(500, ge=1, le=60000, description="Outlier pool size K.")
    outlier_batch: int = Field(64, ge=1, le=1024, description="Outliers per step B.")
    views: int = Field(4, ge=1, le=32, description="Augmented views per training image.")
    n_bins: int = Field(10, ge=2, le=50, description="ECE bins.")
    ablations: bool = Field(True, description="Also run CoOp+DOR with the far / random / oracle pools (first seed).")
    tolerance: float = Field(1.0, ge=0, le=10, description="Base-accuracy tolerance of the §7.5 check (points).")
    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_reproducer(
    "dor", options=DorOptions, description="DOR base-to-new calibration: zero-shot, CoOp, KgCoOp, ±DOR"
)
def reproduce(options: DorOptions, progress: JobContext) -> Report:
    """Every arm over ``seeds`` seeds on the 10/10 base-to-new split; the spec's §7.5 checks; reliability diagrams."""
    import time

    from core.device import device_provenance, resolve_device
    from core.train import pin_threads
    from methods.dor.experiment import ABLATION_POOLS, aggregate, checks, get_backbone, run_arms
    from methods.dor.report import reproduction_report
    from methods.dor.text import reading, shrunk

    start = time.perf_counter()
    dev = resolve_device(options.device)
    task_cfg = TaskConfig(dataset=options.dataset, n_base=options.n_base, shots=options.shots)
    cfg = TuneConfig(
        epochs=options.epochs,
        outlier_k=options.outlier_k,
        outlier_batch=options.outlier_batch,
        views=options.views,
        n_bins=options.n_bins,
    )
    with pin_threads(options.threads):
        backbone = get_backbone(
            options.backbone, options.clip_dir, progress=progress.sub(0.0, 0.2), device=dev, amp=options.amp
        )
        pools: dict = {}
        per_seed = []
        for i, seed in enumerate(range(1, options.seeds + 1)):
            sub = progress.sub(0.2 + 0.8 * i / options.seeds, 0.2 + 0.8 * (i + 1) / options.seeds)
            ablations = ABLATION_POOLS if options.ablations and i == 0 else ()  # the pool ablation: first seed
            per_seed.append(
                run_arms(
                    backbone,
                    task_cfg,
                    cfg,
                    seed=seed,
                    ablations=ablations,
                    pools=pools,
                    progress=sub,
                    device=dev,
                    amp=options.amp,
                )  # fmt: skip
            )
    agg = aggregate(per_seed)
    result = checks(agg, tolerance=options.tolerance)
    where = device_provenance(dev, options.amp)
    info = {
        "backbone": options.clip_dir or f"tiny CLIP '{options.backbone}'",
        "n_new": len(set(per_seed[0]["zeroshot"]["new_labels"].tolist())),
        "seconds": round(time.perf_counter() - start, 1),
        "machine": " ".join(p for p in (platform.machine(), platform.processor()) if p)
        + f" ({options.threads} torch thread(s), {os.cpu_count()} CPUs shared with other jobs)"
        + (f", tuning on {where.get('gpu') or where['device']} ({where['dtype']})" if dev.type != "cpu" else ""),
        "command": f"paperworks reproduce dor{options.cli_options()}",
    }
    report = reproduction_report(options.model_dump(), agg, result, per_seed, pools, info)
    report.metrics.update(where)
    report.add_section("Command", f"`{info['command']}` — {info['seconds']} s on {info['machine']}.")
    report.add_section("What was shrunk", shrunk(options.model_dump()))
    report.add_section("Reading", reading(agg, result, per_seed[0]))
    return report
