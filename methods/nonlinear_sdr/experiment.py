"""Runs of ``paperworks reproduce nonlinear_sdr`` (``docs/results/nonlinear_sdr.md``) and of the simulate job.

Simulation settings run in batches of replications (the ``nonlinear_sdr.simulate`` job): fanned out to
the workers by :func:`core.jobs.dispatch.map_jobs` when a job sender is registered in this process (a
worker or the API; ``dispatch="jobs"`` insists), otherwise in this process; a batch no worker has taken
after 60 s runs here (the steal guard of ``dispatch.wait``). Then the spec §7 checks, the hinge-SVM
regularisation profile of the λ sweep and the real datasets run here, and
:func:`methods.nonlinear_sdr.report.build_report` builds the Report from all of it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from core.jobs import JobContext, Report
from methods.nonlinear_sdr import checks
from methods.nonlinear_sdr.report import build_report, get_stat
from methods.nonlinear_sdr.simulate import ESTIMATORS, replicate

log = logging.getLogger(__name__)
ESTIMATOR_METHODS = {name: kw.get("method") for name, kw in ESTIMATORS.items()}
CONTAMINATION_ESTIMATORS = ("SIR", "DR", "pHd", "PSVM", "PM-ensemble", "kernel PSVM", "neural PSVM")


def simulate_batch(params: Any, progress: JobContext) -> Report:
    """Replications of one setting; ``report.data["results"]`` = one {estimator: metrics} per seed.

    ``report.metrics`` holds each estimator's mean |Spearman| (``<estimator>.rho``) and where the neural
    machine trained (device, dtype, gpu; ``cpu`` when no neural estimator ran).
    """
    from core.device import device_provenance, resolve_device

    neural = any(ESTIMATOR_METHODS.get(e) == "neural" for e in params.estimators)
    dev = resolve_device(params.device if neural else "cpu")
    results = []
    for seed in progress.iter(params.seeds, f"{params.model} n={params.n}"):
        results.append(
            replicate(
                params.model,
                params.n,
                params.p,
                seed,
                estimators=params.estimators,
                contamination=params.contamination,
                lam=params.lam,
                n_slices=params.n_slices,
                neural_steps=params.neural_steps,
                shuffle_y=params.shuffle_y,
                ladle_boot=params.ladle_boot,
                device=str(dev),
                amp=params.amp,
            )
        )
    report = Report(
        title=f"{params.model}: n={params.n}, p={params.p}, ε={params.contamination}",
        summary=f"{len(results)} replications of {', '.join(params.estimators)}",
    )
    report.data = {"params": params.model_dump(), "results": results}
    for e in params.estimators:
        mean_rho = get_stat(results, e, "rho")
        if mean_rho is not None:
            report.metrics[f"{e}.rho"] = mean_rho
    report.metrics.update(device_provenance(dev, params.amp if neural else "off"))
    return report


def run_settings(settings: list[dict[str, Any]], options: Any, progress: JobContext) -> list[list[dict]]:
    """Results (one list of per-seed dicts per setting): ``nonlinear_sdr.simulate`` batches of ``options.chunk``
    seeds, as sub-jobs or in this process (:func:`core.jobs.dispatch.map_jobs`)."""
    from core.jobs.dispatch import map_jobs

    batches: list[tuple[int, dict[str, Any]]] = []
    for i, s in enumerate(settings):
        seeds = list(range(options.seed, options.seed + options.reps))
        for c in range(0, len(seeds), options.chunk):
            batches.append(
                (i, {**s, "seeds": seeds[c : c + options.chunk], "device": options.device, "amp": options.amp})
            )
    per_batch = map_jobs(
        "nonlinear_sdr.simulate",
        [p for _, p in batches],
        inline=lambda p, share: simulate_batch(p, share).data["results"],
        result=lambda data: data["results"],
        dispatch=options.dispatch,
        progress=progress,
        key="nonlinear_sdr",
        timeout=6 * 3600,
        steal_after=60.0,
    )
    out: list[list[dict]] = [[] for _ in settings]
    for (i, _), results in zip(batches, per_batch, strict=True):
        out[i].extend(results)
    return out


def _inline_device(options: Any) -> str:
    """The device this process trains the neural machine on (``auto`` resolved here)."""
    from core.device import resolve_device

    return str(resolve_device(options.device))


def run_checks(options: Any) -> dict[str, Any]:
    """The spec §7 checks (numbers; the Report marks which hold)."""
    return {
        "svc_cosine": checks.svc_equivalence(),
        "affine": checks.affine_equivariance(),
        "monotone": checks.monotone_invariance(),
        "psd": checks.psd_orthonormal(),
        "c3": checks.c3_rate(tuple(options.c3_ns), options.c3_reps),
        "chance": checks.chance_baseline(),
        "kernel_linear": checks.kernel_equals_linear(),
    }


def run_real_data(options: Any, progress: JobContext) -> tuple[dict, dict, Any]:
    """Per dataset the 5-fold k-NN scores of each reduction (every fold kept), the sizes, and the sufficient plots."""
    from methods.nonlinear_sdr.fit import dataset_from
    from methods.nonlinear_sdr.realdata import downstream, sufficient_plot

    real, meta = {}, {}
    dev = _inline_device(options)
    for i, name in enumerate(options.datasets):
        progress(i / max(1, len(options.datasets)), f"real data: {name}")
        ds = dataset_from(name, None, None, options.digits_n)
        real[name] = downstream(ds, neural_steps=options.neural_steps, device=dev, amp=options.amp)
        meta[name] = {"n": len(ds.y), "p": int(ds.x.shape[1]), "kind": ds.kind}
    fig = None
    if options.datasets:
        progress(0.9, "sufficient plots")
        fig = sufficient_plot(options.datasets, neural_steps=options.neural_steps, device=dev, amp=options.amp)
    return real, meta, fig


def settings_of(options: Any) -> dict[str, list[dict[str, Any]]]:
    """The simulation settings of the three studies: the main grid, contamination and the λ sweep."""
    est = list(options.estimators)
    main = [
        {
            "model": m,
            "n": n,
            "p": p,
            "estimators": est,
            "lam": options.lam,
            "neural_steps": options.neural_steps,
            "ladle_boot": options.ladle_boot,
        }
        for m in options.models
        for p in options.ps
        for n in options.ns
    ]
    cont = [
        {
            "model": m,
            "n": options.contamination_n,
            "p": options.ps[0],
            "estimators": [e for e in est if e in CONTAMINATION_ESTIMATORS],
            "lam": options.lam,
            "contamination": eps,
            "neural_steps": options.neural_steps,
        }
        for m in options.contamination_models
        for eps in [0.0, *[e for e in options.contamination if e > 0]]
    ]
    lam_s = [
        {"model": m, "n": max(options.ns), "p": options.ps[0], "estimators": ["PSVM", "kernel PSVM"], "lam": lam}
        for m in ("M1", "M2")
        for lam in options.lam_sweep
    ]
    return {"main": main, "contamination": cont, "lam": lam_s}


def run_reproduction(options: Any, progress: JobContext) -> Report:
    """Every study the options ask for, then the Report (headlines first, ``results.json`` with the raw values)."""
    from core.device import resolve_device

    dev = resolve_device(options.device)  # a cuda run on a worker without CUDA fails here, before any sub-job
    t0 = time.time()
    studies = settings_of(options)
    flat = [s for group in studies.values() for s in group]
    progress(0.0, f"{len(flat)} simulation settings × {options.reps} replications")
    results = run_settings(flat, options, progress.sub(0.0, 0.72))
    out, k = {}, 0
    for name, group in studies.items():
        out[name] = (group, results[k : k + len(group)])
        k += len(group)
    progress(0.72, "spec §7 checks")
    chk = run_checks(options)
    progress(0.76, "hinge-SVM regularisation profile (λ sweep)")
    hinge = checks.hinge_profile(
        "M1", max(options.ns), options.ps[0], tuple(options.lam_sweep), reps=options.reps, n_slices=10
    )
    real, meta, fig = run_real_data(options, progress.sub(0.8, 0.99))
    report = build_report(options, out, chk, hinge, real, meta, fig, seconds=time.time() - t0, device=dev)
    progress(1.0, "done")
    return report
