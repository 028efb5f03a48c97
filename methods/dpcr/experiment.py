"""``paperworks reproduce dpcr``: the spec §6 digits experiment, measured end to end.

Three experiments over the same seeds (each seed = class order, init, subsample):

* ``full``   — all ~125 training samples per class (n_c > d = 64), every arm + a γ sweep;
* ``spc32``  — 32 training samples per class (n_c < d, where CIP's projector is rank-deficient);
* ``spc32_1pass`` — as ``spc32`` but TSSP from a single augmented pass (the reference's setting),
  a paired ablation: training uses its own random stream, so the backbones are identical.

In ``full`` and ``spc32`` every ridge arm (including the non-paper ``dpcr_revive``) is also refit over
:data:`GAMMA_SWEEP`, so :func:`methods.dpcr.analysis.own_gamma` can compare each arm at its own γ
(multi-class hold-out on the final test set, cross-fitted). The spec's configuration (γ from the
task-1 hold-out, the five spec arms) stays the main comparison.

The report is built in :mod:`methods.dpcr.report`.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from core.device import device_provenance, resolve_device
from core.jobs import JobContext, Report
from methods.continual.harness import ExperimentResult, run_experiment, seed_list
from methods.dpcr.analysis import FinalPredictions, run_with_final_predictions
from methods.dpcr.config import ALL_ARMS, RIDGE_ARMS, digits_config, tiny_config
from methods.dpcr.report import TSSP_PASSES, build_report

log = logging.getLogger(__name__)

GAMMA_SWEEP = (0.1, 1.0, 10.0, 100.0, 1000.0, 1e4, 1e5)


def _experiments() -> list[tuple[str, str, int | None, dict]]:
    base = dict(
        tssp_passes=TSSP_PASSES,
        arms=(*ALL_ARMS[:-1], "dpcr_revive", ALL_ARMS[-1]),
        gamma_sweep=GAMMA_SWEEP,
        gamma_sweep_arms=RIDGE_ARMS,
    )
    ablation_arms = ("ridge_uncal", "tssp", "dpcr", "dpcr_literal", "dpcr_revive")
    return [
        ("full", "Digits, all training samples (n_c ≈ 125 > d = 64)", None, base),
        ("spc32", "Digits, 32 training samples per class (n_c < d)", 32, base),
        (
            "spc32_1pass",
            "Digits, 32 samples per class, TSSP from one augmented pass",
            32,
            dict(tssp_passes=1, arms=ablation_arms),
        ),
    ]


def _config(quick: bool, overrides: dict) -> dict:
    cfg = tiny_config(**overrides) if quick else digits_config(**overrides)
    return cfg.model_dump(mode="json")


def run_reproduction(
    progress: JobContext,
    *,
    seeds: int = 5,
    quick: bool = False,
    threads: int = 1,
    device: str = "cpu",
    amp: str = "off",
) -> Report:
    """Run the three experiments over ``seeds`` seeds and build the results report.

    ``quick`` swaps in the tiny schedule (tests and smoke runs; never used for docs/results).
    ``device``/``amp``: where the backbones train (the closed-form parts run on the CPU).
    """
    if not (isinstance(seeds, int) and 1 <= seeds <= 20):
        raise ValueError("seeds must be an integer in 1..20")
    if not (isinstance(threads, int) and 1 <= threads <= 64):
        raise ValueError("threads must be an integer in 1..64")
    dev = resolve_device(device)
    t0, cpu0 = time.perf_counter(), time.process_time()
    plan = _experiments()
    exps: dict[str, ExperimentResult] = {}
    finals: dict[str, FinalPredictions] = {}
    weights = np.array([1.0 if spc is None else 0.4 for _, _, spc, _ in plan])
    bounds = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
    for i, (key, title, spc, overrides) in enumerate(plan):
        log.info("reproduce dpcr: %s", title)
        kwargs = dict(
            seeds=seed_list(seeds),
            options=_config(quick, overrides),
            dataset="digits",
            classes_per_task=2,
            samples_per_class=spc,
            threads=threads,
            progress=progress.sub(bounds[i], bounds[i + 1]),
            device=dev,
            amp=amp,
        )
        if overrides.get("gamma_sweep"):
            exps[key], finals[key] = run_with_final_predictions("dpcr", **kwargs)
        else:
            exps[key] = run_experiment("dpcr", **kwargs)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0

    report = build_report(
        exps, plan, seeds=seeds, quick=quick, threads=threads, elapsed=elapsed, cpu=cpu, finals=finals
    )
    report.metrics.update(device_provenance(dev, amp))
    return report
