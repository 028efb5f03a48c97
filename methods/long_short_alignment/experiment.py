"""Runs of ``paperworks reproduce long_short_alignment``: the synthetic grid, the LM seeds and the SmolLM2 probe.

The synthetic runs (``lsa.synthetic``) and the LM seeds (``lsa.lm``) fan out through
:func:`core.jobs.dispatch.map_jobs` (sub-jobs when a worker is reachable, else in this process; the
steal guard of ``dispatch.wait`` runs a sub-job here when no worker has taken it after 60 s). Runs made
in this process are cached under ``<cache_dir>/long_short_alignment/`` keyed by their params without the
device. :func:`run_reproduction` hands every result to :func:`methods.long_short_alignment.report.build_report`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from core.jobs import JobContext, Report
from methods.long_short_alignment.report import TASKS, build_report


def run_synthetic(options: Any, progress: JobContext) -> list[dict]:
    """One ``lsa.synthetic`` report data dict per (task, pe, seed), via sub-jobs or in process
    (:func:`core.jobs.dispatch.map_jobs`; in process each run is cached)."""
    from core.jobs import get_method
    from core.jobs.dispatch import map_jobs

    grid = [
        {
            "task": t,
            "pe": pe,
            "seed": s,
            "steps": options.synth_steps,
            "eval_per_length": options.eval_per_length,
            "device": options.device,
            "amp": options.amp,
        }
        for t in TASKS
        for pe in options.pes
        for s in range(options.seeds)
    ]
    run = get_method("lsa.synthetic").run
    return map_jobs(
        "lsa.synthetic",
        grid,
        inline=lambda p, share: _cached("synthetic", _cache_params(p.model_dump()), lambda: run(p, share).data),
        dispatch=options.dispatch,
        progress=progress,
        key="lsa",
        timeout=6 * 3600,
        steal_after=60.0,
    )


def _cache_params(params: dict) -> dict:
    """A run's params as its cache key: without the device (a result is the same wherever it ran), with
    ``amp`` only when it is not ``off`` (so runs cached before devices existed stay valid)."""
    out = {k: v for k, v in params.items() if k not in ("device", "amp")}
    if params.get("amp", "off") != "off":
        out["amp"] = params["amp"]
    return out


def _cached(kind: str, params: dict, compute: Any) -> Any:
    """``<cache_dir>/long_short_alignment/<kind>/<hash>.json``: a finished run keyed by its params."""
    cache = _cache_root()
    key = hashlib.sha256(json.dumps({**params, "v": CACHE_VERSION}, sort_keys=True).encode()).hexdigest()[:16]
    path = None if cache is None else Path(cache) / "long_short_alignment" / kind / f"{key}.json"
    if path is not None and path.exists():
        return json.loads(path.read_text())
    value = compute()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    return value


CACHE_VERSION = 1


def _cache_root() -> Path | None:
    from core.config import get_settings

    return get_settings().cache_dir


def run_lm(options: Any, progress: JobContext) -> tuple[dict, Any]:
    """``lm_seeds`` independent runs (own stage A, then stage B per variant × α); all checkpoints.

    One ``lsa.lm`` job per seed spread over the workers, or the seeds in turn here (each cached), through
    :func:`core.jobs.dispatch.map_jobs`.
    """
    from dataclasses import asdict

    from core.config import get_settings
    from core.jobs.dispatch import map_jobs
    from methods.long_short_alignment.lm import LMConfig, run_experiment

    def config(seed: int) -> LMConfig:
        return LMConfig(
            l_train=options.lm_l_train,
            d=options.lm_d,
            layers=options.lm_layers,
            stage_a_steps=options.lm_stage_a_steps,
            stage_b_steps=options.lm_stage_b_steps,
            alphas=tuple(options.lm_alphas),
            saves=options.lm_saves,
            eval_lengths=tuple(options.lm_l_train * k for k in (1, 2, 4)),
            seed=seed,
            variants=tuple(dict.fromkeys(options.lm_variants)),
            eval_tokens=options.lm_eval_tokens,
        )

    def here(p: Any, share: JobContext) -> dict:
        cfg = config(p.seed)
        return _cached(
            "lm",
            _cache_params({**asdict(cfg), "amp": options.amp}),
            lambda: run_experiment(cfg, get_settings().data_dir, share, device=options.device, amp=options.amp),
        )

    params = [
        {
            "l_train": options.lm_l_train,
            "d": options.lm_d,
            "layers": options.lm_layers,
            "stage_a_steps": options.lm_stage_a_steps,
            "stage_b_steps": options.lm_stage_b_steps,
            "alphas": list(options.lm_alphas),
            "saves": options.lm_saves,
            "seed": s,
            "variants": list(options.lm_variants),
            "eval_tokens": options.lm_eval_tokens,
            "device": options.device,
            "amp": options.amp,
        }
        for s in range(options.lm_seeds)
    ]
    per_seed = map_jobs(
        "lsa.lm",
        params,
        inline=here,
        dispatch=options.dispatch,
        progress=progress,
        key="lsa-lm",
        timeout=6 * 3600,
        steal_after=60.0,
    )
    # the tables read only l_train, eval_lengths and saves of the config: the same for every seed
    return {"runs": [r for res in per_seed for r in res["runs"]]}, config(options.lm_seeds - 1)


def run_smollm2(options: Any, progress: JobContext) -> dict | None:
    """L_misalign of the local SmolLM2-135M on WikiText-2 (cached), or ``None`` when not asked for."""
    if not options.smollm2_samples:
        return None
    from core.config import get_settings
    from methods.long_short_alignment.smol import smollm2_misalignment

    params = {"l_train": options.smollm2_l_train, "n_samples": options.smollm2_samples}
    return _cached(
        "smollm2",
        _cache_params({**params, "amp": options.amp}),
        lambda: smollm2_misalignment(
            get_settings().data_dir,
            **params,
            progress=progress,
            device=options.device,
            amp=options.amp,
        ),
    )


def run_reproduction(options: Any, progress: JobContext) -> Report:
    """Every run the options ask for, then the Report (headlines first, results.json with the raw values)."""
    import time

    from core.device import resolve_device

    dev = resolve_device(options.device)  # a cuda run on a worker without CUDA fails here, before any sub-job
    t0 = time.time()
    has_lm = not options.skip_lm
    synthetic = run_synthetic(options, progress.sub(0.0, 0.3 if has_lm else 0.9))
    lm_result, lm_cfg = run_lm(options, progress.sub(0.3, 0.9)) if has_lm else (None, None)
    smol = run_smollm2(options, progress.sub(0.9, 1.0))
    return build_report(options, synthetic, lm_result, lm_cfg, smol, device=dev, seconds=time.time() - t0)
