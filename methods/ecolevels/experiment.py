"""The probe runner (spec §6): a probe × k prompt paraphrases × seeds against one gateway model.

Each (paraphrase, seed) is one batch of requests through the evaluation harness (raw outputs in
``llm_eval_outputs``); the bias index is the mean over the distinct units (each stimulus's units
averaged over the paraphrases and seeds that measured it) with a percentile bootstrap 95% CI over
those distinct units, and the per-(paraphrase, seed) indices are kept for the reliability check (R4).
"""

from __future__ import annotations

from typing import Literal

from core.jobs import JobContext, null_context
from core.stats import bootstrap_ci
from methods.ecolevels.classify import classify
from methods.ecolevels.probes import PLANNERS, UnitRun, distinct_units, local_embedder, weat_effect
from methods.ecolevels.registry import get_probe
from methods.ecolevels.result import ProbeResult
from methods.ecolevels.wordlists import CAREER, FAMILY, FEMALE_NAMES, MALE_NAMES
from methods.llm_eval.harness import GenRequest, create_run, finish_run, run_requests


def run_probe(
    probe_id: str,
    *,
    model: str,
    paraphrases: int = 2,
    seeds: list[int] | None = None,
    n_units: int = 8,
    mode: Literal["inline", "jobs"] = "inline",
    concurrency: int = 4,
    progress: JobContext | None = None,
    data_dir=None,
) -> ProbeResult:
    """Run one registered probe; ``n_units`` pairs/words/statements/résumés per (paraphrase, seed)."""
    progress = progress or null_context()
    probe = get_probe(probe_id)
    if probe.runner is None:
        raise ValueError(f"probe {probe_id} is registered for classification only (no runner)")
    seeds = seeds or [0, 1]
    runs: list[UnitRun] = []
    run_id = None
    if probe.runner == "weat":
        for p in range(paraphrases):
            # deterministic (the model's input embeddings): seeds would only repeat the measurement, so it is
            # taken once per paraphrase; its units are the names
            d, units = weat_effect(local_embedder(model, p), MALE_NAMES, FEMALE_NAMES, CAREER, FAMILY)
            runs.append(UnitRun(p, seeds[0], units, {"weat_d": d}, keys=[*MALE_NAMES, *FEMALE_NAMES]))
    else:
        plans = {
            (p, s): PLANNERS[probe.runner](model, p, s, n_units, data_dir) for p in range(paraphrases) for s in seeds
        }
        reqs = [
            GenRequest(**(r.model_dump() | {"key": f"{probe.id}/p{p}/s{s}/{r.key}"}))
            for (p, s), plan in plans.items()
            for r in plan.requests
        ]
        run_id = create_run(
            f"ecolevels.{probe.id}",
            model,
            {"paraphrases": paraphrases, "seeds": list(seeds), "n_units": n_units},
            resume=True,
        )
        outs = run_requests(reqs, model=model, run_id=run_id, mode=mode, concurrency=concurrency, progress=progress)
        for (p, s), plan in plans.items():
            texts = {r.key: outs[f"{probe.id}/p{p}/s{s}/{r.key}"].text for r in plan.requests}
            units, details = plan.score(texts)
            runs.append(UnitRun(p, s, units, details, keys=plan.keys))
    keys, values = distinct_units(runs)
    ci = bootstrap_ci(values, seed=0)
    result = ProbeResult(
        probe_id=probe.id,
        name=probe.name,
        construct_key=probe.bias_construct.key(),
        level=classify(probe.metadata),
        effect=ci.estimate,
        ci_low=ci.low,
        ci_high=ci.high,
        n_units=len(values),
        units={"keys": keys, "values": values},
        runs=[
            {"paraphrase": r.paraphrase, "seed": r.seed, "index": float(sum(r.units) / max(1, len(r.units)))}
            | r.details
            for r in runs
        ],
        moderators=dict(probe.metadata.moderators),
        model=model,
        run_id=run_id,
    )
    if run_id:
        finish_run(run_id, {"effect": result.effect, "ci": [result.ci_low, result.ci_high]})
    return result
