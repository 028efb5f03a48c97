"""``medcog.high`` (the simulator on synthetic cases) and ``paperworks reproduce medcog``."""

from __future__ import annotations

import logging
import time
from typing import Literal

from pydantic import Field

from agents.medcog.simulate import Disease, HighParams, run_high
from core.jobs import JobContext, Report, ReproducerOptions, null_context, register_method, register_reproducer
from core.llm.local_models import model_available
from methods.medcog.config import LOCAL_MODELS, PRESETS
from methods.medcog.report import ModelResult, build_report, result_data

log = logging.getLogger(__name__)


@register_method(
    "medcog.high",
    title="MultiCogEval: high level (interactive diagnosis)",
    description="The LangGraph clinical-decision simulator (PE / LAB / IMAGE / MICRO / OUTPUT, one use each, "
    "summaries over budget, ≤ 30 turns) on synthetic cases; strict score = correct × mean exam recall.",
)
def high_job(params: HighParams, progress: JobContext) -> Report:
    summary, by_seed, run_id = run_high(params, progress)
    eps = [e for v in by_seed.values() for e in v]
    label = params.model or "default model"
    report = Report(
        title=f"MultiCogEval high level: {label}",
        summary=f"macro strict {summary.macro_strict:.3f} ± {summary.macro_strict_se:.3f}, diagnosis accuracy "
        f"{summary.macro_acc:.3f} over {summary.n_episodes} episode(s) (run {run_id})",
    )
    report.add_table(
        "Per disease",
        ["disease", "strict", "accuracy", "episodes", "mean turns"],
        [[d, v["strict"], v["accuracy"], v["episodes"], v["mean_turns"]] for d, v in summary.per_disease.items()],
    )
    report.metrics.update({"macro_strict": round(summary.macro_strict, 4), "run_id": run_id})
    report.data = {
        "results": [result_data(ModelResult(label=label, model=label, kind="model", high=summary, episodes=eps))]
    }
    return report


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
    from methods.medcog.baselines import high_baselines, lowmid_baselines
    from methods.medcog.cases import make_cases
    from methods.medcog.lowmid import LowMidParams, run_lowmid

    t0 = time.perf_counter()
    tasks = ["MCQ", "SV", "AE", "MR"]
    skipped: dict[str, str] = {}
    models = []
    for m in LOCAL_MODELS:
        if m not in options.models and model_available(m) is None:
            skipped[m] = "installed but not requested in this run (-o models=[...] chose the models)"
    for m in options.models:
        why = model_available(m)
        if why:
            skipped[m] = f"not installed here ({why[:160]})"
        else:
            models.append(m)

    def lowmid(model: str, prog: JobContext):
        p = LowMidParams(
            model=model, datasets=options.datasets, tasks=tasks, n_items=options.n_items, repeats=options.repeats
        )
        return run_lowmid(p, prog)

    def high(model: str, prog: JobContext, temperature: float = 0.8):
        p = HighParams(
            model=model,
            diseases=options.diseases,
            cases_per_disease=options.cases_per_disease,
            seeds=options.seeds,
            max_turns=options.max_turns,
            temperature=temperature,
        )
        summary, by_seed, _ = run_high(p, prog)
        return summary, [e for v in by_seed.values() for e in v]

    results: list[ModelResult] = []
    if options.baselines:
        progress(0.01, "baselines")
        with lowmid_baselines(options.datasets, tasks) as lm:
            for label, model in lm.items():
                results.append(
                    ModelResult(label=label, model=model, kind="baseline", lowmid=lowmid(model, null_context()))
                )
        # the scripted baselines always run the high level (seconds)
        cases = make_cases(list(options.diseases), options.cases_per_disease)
        with high_baselines(cases) as hb:
            for label, model in hb.items():
                summary, eps = high(model, null_context(), 0.0)
                found = next((r for r in results if r.label == label), None)
                if found is None:
                    results.append(ModelResult(label=label, model=model, kind="baseline", high=summary, episodes=eps))
                else:
                    found.high, found.episodes = summary, eps
    n = max(1, len(models))
    for i, model in enumerate(models):
        t = time.perf_counter()
        span = progress.sub(0.05 + 0.95 * i / n, 0.05 + 0.95 * (i + 1) / n)
        r = ModelResult(label=model.split("/")[-1], model=model, kind="model")
        r.lowmid = lowmid(model, span.sub(0.0, 0.6))
        if options.high:
            r.high, r.episodes = high(model, span.sub(0.6, 1.0))
        r.seconds = time.perf_counter() - t
        results.append(r)
    return build_report(
        results,
        skipped=skipped,
        options=options.model_dump(mode="json"),
        command="paperworks reproduce medcog" + options.cli_options(),
        wall_s=time.perf_counter() - t0,
    )
