"""``ecolevels.run`` (the whole flow for one model and target) and ``paperworks reproduce ecolevels``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agents.ecolevels.config import FlowConfig
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.ecolevels.config import LOCAL_MODELS, PRESETS
from methods.ecolevels.jobs import RunnableProbe

FlowParams = FlowConfig  # the job's params are the graph's run configuration


@register_method(
    "ecolevels.run",
    title="EcoLevels: probe, place, reconcile",
    description="The LangGraph flow: choose probes for a target task, run them (paraphrases × seeds, bootstrap CIs), "
    "place them on level × ecological validity, label conflicts R1–R4 and predict generalisation.",
)
def flow_job(params: FlowParams, progress: JobContext) -> Report:
    from agents.ecolevels.experiment import flow_report  # langgraph: imported when a run starts
    from core.config import get_settings

    progress(0.02, "running the flow")
    rep = flow_report(params, params.model or get_settings().llm_model)
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
    from agents.ecolevels.experiment import reproduce_reports
    from methods.ecolevels.report import combine

    reports, skipped, wall_s = reproduce_reports(options, progress)
    return combine(
        reports,
        skipped=skipped,
        command="paperworks reproduce ecolevels" + options.cli_options(),
        options=options.model_dump(mode="json"),
        wall_s=wall_s,
    )
