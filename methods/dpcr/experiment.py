"""``paperworks reproduce dpcr``: the spec §6 digits experiment, measured end to end.

Three experiments over the same seeds (each seed = class order, init, subsample):

* ``full``   — all ~125 training samples per class (n_c > d = 64), every arm + a γ sweep;
* ``spc32``  — 32 training samples per class (n_c < d, where CIP's projector is rank-deficient);
* ``spc32_1pass`` — as ``spc32`` but TSSP from a single augmented pass (the reference's setting),
  a paired ablation: training uses its own random stream, so the backbones are identical.

The report is built in :mod:`methods.dpcr.report`.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from core.jobs import JobContext, Report
from methods.continual.harness import ExperimentResult, run_experiment, seed_list
from methods.dpcr.config import digits_config, tiny_config
from methods.dpcr.report import TSSP_PASSES, build_report

log = logging.getLogger(__name__)

GAMMA_SWEEP = (0.1, 1.0, 10.0, 100.0, 1000.0)


def _experiments() -> list[tuple[str, str, int | None, dict]]:
    base = dict(tssp_passes=TSSP_PASSES)
    ablation_arms = ("ridge_uncal", "tssp", "dpcr", "dpcr_literal")
    return [
        ("full", "Digits, all training samples (n_c ≈ 125 > d = 64)", None, dict(base, gamma_sweep=GAMMA_SWEEP)),
        ("spc32", "Digits, 32 training samples per class (n_c < d)", 32, dict(base, gamma_sweep=GAMMA_SWEEP)),
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


def run_reproduction(progress: JobContext, *, seeds: int = 5, quick: bool = False, threads: int = 1) -> Report:
    """Run the three experiments over ``seeds`` seeds and build the results report.

    ``quick`` swaps in the tiny schedule (tests and smoke runs; never used for docs/results).
    """
    if not (isinstance(seeds, int) and 1 <= seeds <= 20):
        raise ValueError("seeds must be an integer in 1..20")
    if not (isinstance(threads, int) and 1 <= threads <= 64):
        raise ValueError("threads must be an integer in 1..64")
    t0, cpu0 = time.perf_counter(), time.process_time()
    plan = _experiments()
    exps: dict[str, ExperimentResult] = {}
    weights = np.array([1.0 if spc is None else 0.4 for _, _, spc, _ in plan])
    bounds = np.concatenate([[0.0], np.cumsum(weights) / weights.sum()])
    for i, (key, title, spc, overrides) in enumerate(plan):
        log.info("reproduce dpcr: %s", title)
        exps[key] = run_experiment(
            "dpcr",
            seeds=seed_list(seeds),
            options=_config(quick, overrides),
            dataset="digits",
            classes_per_task=2,
            samples_per_class=spc,
            threads=threads,
            progress=progress.sub(bounds[i], bounds[i + 1]),
        )
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0

    return build_report(exps, plan, seeds=seeds, quick=quick, threads=threads, elapsed=elapsed, cpu=cpu)
