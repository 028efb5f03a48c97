"""EcoLevels' runs: the flow (the graph) on one model, and the reproduction over the references and the models."""

from __future__ import annotations

import time
from typing import Any

from agents.ecolevels.config import FlowConfig
from agents.ecolevels.graph import run_flow
from core.jobs import JobContext, Report
from core.llm import model_available


def flow_report(params: FlowConfig, model: str) -> Report:
    """The flow's Report for ``model`` (with the level × EV grid figure, which the graph's JSON state cannot hold)."""
    from methods.ecolevels.report import grid_from_data

    out = run_flow(params.model_copy(update={"model": model}))
    rep = Report.model_validate(out["report"])
    if rep.data.get("results"):
        rep.add_figure("grid.png", grid_from_data(rep.data), caption="Level × ecological-validity grid")
    return rep


def reproduce_reports(options: Any, progress: JobContext) -> tuple[dict[str, Report], dict[str, str], float]:
    """The scripted references on the generation probes, then the flow on every available model; returns the flow
    reports by label, the skipped models and the wall time in seconds."""
    from methods.ecolevels.baselines import probe_baselines

    t0 = time.perf_counter()
    reports: dict[str, Report] = {}
    skipped: dict[str, str] = {}
    models = []
    for m in options.models:
        why = model_available(m)
        if why:
            skipped[m] = f"not installed here ({why[:160]})"
        else:
            models.append(m)
    sizes = dict(paraphrases=options.paraphrases, seeds=options.seeds, n_units=options.n_units)
    generative = [p for p in options.probes if p != "weat_embeddings"]
    with probe_baselines() as base:
        for label, model in base.items():
            reports[label] = flow_report(
                FlowConfig(model=model, target=options.target, probes=generative, **sizes), model
            )
    for i, m in enumerate(models):
        progress(i / max(1, len(models)), f"flow on {m}")
        reports[m] = flow_report(FlowConfig(model=m, target=options.target, probes=options.probes, **sizes), m)
    return reports, skipped, time.perf_counter() - t0
