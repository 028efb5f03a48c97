"""``ecolevels.run`` (the whole flow for one model and target) and ``paperworks reproduce ecolevels``."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import Field

from agents.ecolevels.config import FlowConfig
from agents.ecolevels.graph import run_flow
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.ecolevels.config import LOCAL_MODELS, PRESETS
from methods.ecolevels.jobs import RunnableProbe

FlowParams = FlowConfig  # the job's params are the graph's run configuration


def _flow(params: FlowParams, model: str) -> Report:
    out = run_flow(params.model_copy(update={"model": model}))
    from methods.ecolevels.report import grid_from_data

    rep = Report.model_validate(out["report"])
    if rep.data.get("results"):
        rep.add_figure("grid.png", grid_from_data(rep.data), caption="Level × ecological-validity grid")
    return rep


@register_method(
    "ecolevels.run",
    title="EcoLevels: probe, place, reconcile",
    description="The LangGraph flow: choose probes for a target task, run them (paraphrases × seeds, bootstrap CIs), "
    "place them on level × ecological validity, label conflicts R1–R4 and predict generalisation.",
)
def flow_job(params: FlowParams, progress: JobContext) -> Report:
    from core.config import get_settings

    progress(0.02, "running the flow")
    rep = _flow(params, params.model or get_settings().llm_model)
    progress(1.0, "done")
    return rep


class EcoOptions(ReproducerOptions):
    PRESETS = PRESETS
    preset: Literal["quick", "spec", "tiny"] = Field(
        "quick", description="quick (results), spec (larger), tiny (tests)."
    )
    models: list[str] = Field(LOCAL_MODELS, max_length=6, description="Gateway models; absent local ones are skipped.")
    probes: list[RunnableProbe] = Field(["weat_embeddings", "winobias", "explicit_agree", "resume_screening"])
    seeds: list[int] = Field([0, 1], min_length=1, max_length=10)
    paraphrases: int = Field(2, ge=1, le=2)
    n_units: int = Field(8, ge=1, le=400)
    target: Literal["resume_screener", "letter_assistant"] = "resume_screener"


@register_reproducer(
    "ecolevels", options=EcoOptions, description="EcoLevels: 4 probes (one per level) on the local models"
)
def reproduce(options: EcoOptions, progress: JobContext) -> Report:
    from core.llm.local_models import model_available
    from methods.ecolevels.report import combine

    t0 = time.perf_counter()
    from methods.ecolevels.baselines import probe_baselines

    reports: dict[str, Report] = {}
    skipped: dict[str, str] = {}
    models = []
    for m in options.models:
        why = model_available(m)
        if why:
            skipped[m] = f"not installed here ({why[:160]})"
        else:
            models.append(m)
    generative = [p for p in options.probes if p != "weat_embeddings"]
    with probe_baselines() as base:
        for label, model in base.items():
            p = FlowParams(
                model=model,
                target=options.target,
                probes=generative,
                paraphrases=options.paraphrases,
                seeds=options.seeds,
                n_units=options.n_units,
            )
            reports[label] = _flow(p, model)
    for i, m in enumerate(models):
        progress(i / max(1, len(models)), f"flow on {m}")
        p = FlowParams(
            model=m,
            target=options.target,
            probes=options.probes,
            paraphrases=options.paraphrases,
            seeds=options.seeds,
            n_units=options.n_units,
        )
        reports[m] = _flow(p, m)
    return combine(
        reports,
        skipped=skipped,
        command="paperworks reproduce ecolevels" + options.cli_options(),
        options=options.model_dump(mode="json"),
        wall_s=time.perf_counter() - t0,
    )
