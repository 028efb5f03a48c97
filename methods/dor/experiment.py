"""The base-to-new experiment: zero-shot, CoOp, CoOp+DOR, KgCoOp, KgCoOp+DOR over seeds (spec dor.md §4, §7).

:func:`get_backbone` gives the tiny CLIP of :mod:`methods.vlm` (trained once and cached) or a
user's CLIP checkpoint folder; :func:`outlier_pool` builds DOR's pool once (it depends on the
base class names only); :func:`run_arms` tunes and evaluates every arm for one seed;
:func:`aggregate` turns the per-seed results into means ± sd and :func:`per_seed_values` into the
raw per-seed lists the headline claims are computed from. :func:`tune_one` is the body of the job
``dor.tune``; :func:`reproduce` the body of ``paperworks reproduce dor``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from core.device import device_provenance, resolve_device
from core.jobs import JobContext, Report
from core.provenance import provenance, provenance_line
from core.stats import mean_sd
from core.train import pin_threads
from methods.dor.config import TaskConfig, TuneConfig
from methods.dor.outliers import OutlierPool, select_pool
from methods.dor.report import reproduction_report, tune_report
from methods.dor.tune import Task, evaluate, make_task, tune
from methods.vlm.data import wordnet_lemmas

log = logging.getLogger(__name__)

ARMS: dict[str, dict] = {
    "zeroshot": {},
    "coop": {"host": "coop", "dor": False},
    "coop+dor": {"host": "coop", "dor": True},
    "kgcoop": {"host": "kgcoop", "dor": False},
    "kgcoop+dor": {"host": "kgcoop", "dor": True},
}
ABLATION_POOLS = ("far", "random", "oracle")


def resolve_clip_dir(clip_dir: str) -> Path:
    """``clip_dir`` is a folder name under ``<home>/models`` (no path tricks): a saved CLIP checkpoint."""
    from core.config import get_settings

    root = (Path(get_settings().home) / "models").resolve()
    path = (root / clip_dir).resolve()
    if root not in path.parents:
        raise ValueError(f"clip_dir must name a folder inside {root}")
    return path


def get_backbone(
    backbone: str = "default", clip_dir: str | None = None, progress=None, *, device=None, amp: str = "off"
):
    """The tiny CLIP preset ``backbone`` (cached, trained if missing) or the CLIP checkpoint in ``clip_dir``, on ``device``."""
    if clip_dir:
        from methods.vlm.backbone import load_backbone

        return load_backbone(resolve_clip_dir(clip_dir), device="cpu" if device is None else device)
    from methods.vlm.cache import get_tiny_clip

    return get_tiny_clip(backbone, progress=progress, device=device, amp=amp)[0]


def outlier_pool(backbone, task: Task, cfg: TuneConfig) -> OutlierPool:
    pos = ("noun", "adj") if cfg.adjectives else ("noun",)
    k = min(cfg.outlier_k, len(task.new_names)) if cfg.pool == "oracle" else cfg.outlier_k
    return select_pool(
        backbone, wordnet_lemmas(pos), task.base_names, k=k, kind=cfg.pool, new_names=task.new_names, seed=task.seed
    )


def run_arms(
    backbone,
    task_cfg: TaskConfig,
    base_cfg: TuneConfig,
    *,
    seed: int,
    arms: tuple[str, ...] = tuple(ARMS),
    ablations: tuple[str, ...] = (),
    pools: dict[str, OutlierPool] | None = None,
    progress=None,
    device=None,
    amp: str = "off",
) -> dict[str, dict]:
    """Every arm's evaluation for one seed (``coop+dor@far`` etc. for the pool ablations); tuning on ``device`` in ``amp``."""
    task = make_task(backbone, task_cfg, seed=seed, views=base_cfg.views)
    pools = pools if pools is not None else {}
    jobs: list[tuple[str, TuneConfig | None]] = []
    for arm in arms:
        jobs.append((arm, None if arm == "zeroshot" else base_cfg.model_copy(update=ARMS[arm])))
    for kind in ablations:
        jobs.append((f"coop+dor@{kind}", base_cfg.model_copy(update={"host": "coop", "dor": True, "pool": kind})))
    out: dict[str, dict] = {}
    for i, (name, cfg) in enumerate(jobs):
        sub = progress.sub(i / len(jobs), (i + 1) / len(jobs)) if progress is not None else None
        if cfg is None:
            out[name] = evaluate(backbone, task, None, n_bins=base_cfg.n_bins)
            continue
        pool = None
        if cfg.dor:
            if cfg.pool not in pools:
                pools[cfg.pool] = outlier_pool(backbone, task, cfg)
            pool = pools[cfg.pool]
        result = tune(backbone, task, cfg, pool, seed=seed, progress=sub, device=device, amp=amp)
        res = evaluate(backbone, task, result.learner, n_bins=cfg.n_bins)
        res["losses"] = result.losses
        res["parts"] = result.parts
        res["seconds"] = result.seconds
        out[name] = res
        log.info("seed %d %s: base acc %.1f ece %.2f | new acc %.1f ece %.2f", seed, name, res["base"]["acc"],
                 res["base"]["ece"], res["new"]["acc"], res["new"]["ece"])  # fmt: skip
    return out


METRICS = ("acc", "conf", "ece", "ace", "mce", "fd")


def per_seed_values(per_seed: list[dict[str, dict]]) -> dict[str, Any]:
    """The raw per-seed lists: ``{arm: {"base_ece": [seed 1, seed 2, ...], ..., "hm": [...]}}``.

    Arms run on every seed only (the pool ablations of the first seeds are kept apart under
    ``"ablation"``, one list per arm over the seeds that ran it); ``"derived"`` holds the per-seed
    new-class FD gaps to zero-shot, ``|FD(arm) − FD(zero-shot)|``, for CoOp and CoOp+DOR.
    """
    common = [arm for arm in per_seed[0] if "@" not in arm and all(arm in r for r in per_seed)]
    raw: dict[str, Any] = {"seeds": list(range(1, len(per_seed) + 1))}
    for arm in common:
        vals = {
            f"{split}_{m}": [float(r[arm][split][m]) for r in per_seed] for split in ("base", "new") for m in METRICS
        }
        vals["hm"] = [float(r[arm]["hm"]) for r in per_seed]
        raw[arm] = vals
    abl = sorted({a for r in per_seed for a in r if "@" in a})
    if abl:
        raw["ablation"] = {}
        for arm in ["coop", "coop+dor", *abl]:
            rows = [r for r in per_seed if all(a in r for a in abl)]
            raw["ablation"][arm] = {
                key: [float(r[arm][split][m]) for r in rows]
                for key, split, m in (("base_ece", "base", "ece"), ("new_ece", "new", "ece"), ("new_acc", "new", "acc"))
            }
            raw["ablation"][arm]["hm_ece"] = [
                _hm(b, n)
                for b, n in zip(raw["ablation"][arm]["base_ece"], raw["ablation"][arm]["new_ece"], strict=True)
            ]
    if {"zeroshot", "coop", "coop+dor"} <= set(raw):
        zs = raw["zeroshot"]["new_fd"]
        raw["derived"] = {
            f"fd_gap_{arm.replace('+', '_')}": [abs(a - z) for a, z in zip(raw[arm]["new_fd"], zs, strict=True)]
            for arm in ("coop", "coop+dor")
        }
    return raw


def _hm(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b > 0 else 0.0


def aggregate(per_seed: list[dict[str, dict]]) -> dict[str, dict[str, tuple[float, float]]]:
    """Mean and sample sd over seeds of every arm's base/new metrics and HM: {arm: {"base_ece": (mean, sd), ...}}."""
    raw = per_seed_values(per_seed)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for arm, vals in raw.items():
        if arm in ("seeds", "ablation", "derived"):
            continue
        out[arm] = {k: (mean_sd(v).mean, mean_sd(v).sd) for k, v in vals.items()}
    return out


def tune_one(params: Any, progress: JobContext) -> Report:
    """The job ``dor.tune``: one host (± DOR) tuned on the base classes and evaluated against zero-shot."""
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


def reproduce(options: Any, progress: JobContext) -> Report:
    """``paperworks reproduce dor``: every arm over seeds 1..``seeds`` (paired: the same few-shot draw per seed
    in every arm), the outlier-pool ablation on the first ``ablation_seeds`` seeds, the headline claims."""
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
    n_abl = options.ablation_seeds if options.ablations else 0
    with pin_threads(options.threads):
        backbone = get_backbone(
            options.backbone, options.clip_dir, progress=progress.sub(0.0, 0.2), device=dev, amp=options.amp
        )
        pools: dict = {}
        per_seed = []
        for i, seed in enumerate(range(1, options.seeds + 1)):
            sub = progress.sub(0.2 + 0.8 * i / options.seeds, 0.2 + 0.8 * (i + 1) / options.seeds)
            ablations = ABLATION_POOLS if i < n_abl else ()
            t0 = time.perf_counter()
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
            log.info("seed %d done in %.0f s", seed, time.perf_counter() - t0)
    info = {
        "backbone": options.clip_dir or f"tiny CLIP '{options.backbone}'",
        "n_new": len(set(per_seed[0]["zeroshot"]["new_labels"].tolist())),
        "seconds": round(time.perf_counter() - start, 1),
        "machine": provenance_line(dev, options.amp, threads=options.threads),
        "provenance": provenance(dev, options.amp, threads=options.threads),
        "command": f"paperworks reproduce dor{options.cli_options()}",
    }
    return reproduction_report(options.model_dump(), per_seed_values(per_seed), per_seed, pools, info)
