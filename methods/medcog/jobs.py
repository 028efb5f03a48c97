"""``medcog.lowmid``: the low/mid levels of MultiCogEval for one gateway model."""

from __future__ import annotations

from core.jobs import JobContext, Report, register_method
from methods.medcog.lowmid import LowMidParams, run_lowmid
from methods.medcog.report import ModelResult, result_data


@register_method(
    "medcog.lowmid",
    title="MultiCogEval: low and mid levels",
    description="Few-shot MCQ / statement verification / answer existence / mistake rectification on MedQA or "
    "MedMCQA (k = 5 demos, 2 048-token rule, greedy, 5 repeats); chance-normalised scores ± SE; raw outputs stored.",
)
def lowmid_job(params: LowMidParams, progress: JobContext) -> Report:
    """Generate (here or as llm_eval.batch jobs) and score the low/mid tasks."""
    res = run_lowmid(params, progress)
    report = Report(
        title=f"MultiCogEval low/mid: {res.model}",
        summary=", ".join(f"{k} {v['norm']:+.3f} ± {v['se']:.3f}" for k, v in res.levels.items())
        + f" (normalised; {res.n_generations} generations, {res.n_errors} failed, run {res.run_id})",
    )
    report.add_table(
        "Per task",
        ["dataset", "task", "chance", "accuracy", "± SE", "normalised", "± SE"],
        [[s.dataset, s.task, s.chance, s.acc, s.acc_se, s.norm, s.norm_se] for s in res.scores],
    )
    for k, v in res.levels.items():
        report.metrics[k] = round(v["norm"], 4)
    report.metrics["run_id"] = res.run_id
    report.data = {"results": [result_data(ModelResult(label=res.model, model=res.model, kind="model", lowmid=res))]}
    return report
