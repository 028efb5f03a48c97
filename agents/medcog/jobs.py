"""``medcog.high`` (the simulator on synthetic cases) and ``paperworks reproduce medcog``."""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import Field

from agents.medcog.simulate import Disease, HighParams, run_high
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from methods.medcog.config import LOCAL_MODELS, PRESETS
from methods.medcog.report import build_report, high_report

log = logging.getLogger(__name__)


@register_method(
    "medcog.high",
    title="MultiCogEval: high level (interactive diagnosis)",
    description="The LangGraph clinical-decision simulator (PE / LAB / IMAGE / MICRO / OUTPUT, one use each, "
    "summaries over budget, ≤ 30 turns) on synthetic cases; strict score = correct × mean exam recall.",
)
def high_job(params: HighParams, progress: JobContext) -> Report:
    summary, by_seed, run_id = run_high(params, progress)
    return high_report(summary, by_seed, run_id, params.model or "default model")


class MedcogOptions(ReproducerOptions):
    PRESETS = PRESETS
    preset: Literal["quick", "spec", "tiny"] = Field(
        "quick", description="quick (the results run, ~5 min per model), spec (§6 scale, hours), tiny (tests)."
    )
    models: list[str] = Field(
        LOCAL_MODELS, min_length=0, max_length=6, description="Gateway models; absent local ones are skipped."
    )
    datasets: list[Literal["medqa", "medmcqa"]] = Field(["medqa"], min_length=1)
    n_items: int = Field(1, ge=1, le=795)
    repeats: int = Field(5, ge=2, le=10)
    diseases: list[Disease] = Field(["Pancreatitis"], min_length=1)
    cases_per_disease: int = Field(1, ge=1, le=20)
    seeds: list[int] = Field([2024], min_length=1, max_length=5)
    max_turns: int = Field(30, ge=2, le=30)
    high: bool = Field(True, description="Run the high level for the models too (the baselines always do).")
    baselines: bool = Field(True, description="Add the oracle and constant scripted baselines.")


@register_reproducer(
    "medcog", options=MedcogOptions, description="MultiCogEval low/mid (MedQA) and high (synthetic cases) levels"
)
def reproduce(options: MedcogOptions, progress: JobContext) -> Report:
    from agents.medcog.experiment import reproduce_results

    results, skipped, wall_s = reproduce_results(options, progress)
    return build_report(
        results,
        skipped=skipped,
        options=options.model_dump(mode="json"),
        command="paperworks reproduce medcog" + options.cli_options(),
        wall_s=wall_s,
    )
