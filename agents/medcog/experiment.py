"""MultiCogEval's runs: one model's low/mid and high levels, and the reproduction over models and baselines.

The high level runs the simulator graph (:mod:`agents.medcog.simulate`), so the reproduction lives beside
the graph; the low/mid runs and every Report builder are the method's (:mod:`methods.medcog`).
"""

from __future__ import annotations

import time
from typing import Any

from agents.medcog.simulate import HighParams, run_high
from core.jobs import JobContext, null_context
from core.llm import model_available
from methods.medcog.config import LOCAL_MODELS
from methods.medcog.report import ModelResult

TASKS = ["MCQ", "SV", "AE", "MR"]


def available_models(requested: list[str]) -> tuple[list[str], dict[str, str]]:
    """The requested models this machine can serve, and why each other known local model is left out."""
    skipped: dict[str, str] = {}
    models = []
    for m in LOCAL_MODELS:
        if m not in requested and model_available(m) is None:
            skipped[m] = "installed but not requested in this run (-o models=[...] chose the models)"
    for m in requested:
        why = model_available(m)
        if why:
            skipped[m] = f"not installed here ({why[:160]})"
        else:
            models.append(m)
    return models, skipped


def reproduce_results(options: Any, progress: JobContext) -> tuple[list[ModelResult], dict[str, str], float]:
    """The scripted baselines (oracle, constant; the high level's 'output at once'), then every available model's
    low/mid levels and, with ``options.high``, its high level; returns the results, the skipped models and the
    wall time in seconds."""
    from methods.medcog.baselines import high_baselines, lowmid_baselines
    from methods.medcog.cases import make_cases
    from methods.medcog.lowmid import LowMidParams, run_lowmid

    t0 = time.perf_counter()
    models, skipped = available_models(list(options.models))

    def lowmid(model: str, prog: JobContext):
        p = LowMidParams(
            model=model, datasets=options.datasets, tasks=TASKS, n_items=options.n_items, repeats=options.repeats
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
        with lowmid_baselines(options.datasets, TASKS) as lm:
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
    return results, skipped, time.perf_counter() - t0
