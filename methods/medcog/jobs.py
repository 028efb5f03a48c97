"""``medcog.lowmid``: the low/mid levels of MultiCogEval for one gateway model."""

from __future__ import annotations

from core.jobs import JobContext, Report, register_method
from methods.medcog.lowmid import LowMidParams, run_lowmid
from methods.medcog.report import lowmid_report


@register_method(
    "medcog.lowmid",
    title="MultiCogEval: low and mid levels",
    description="Few-shot MCQ / statement verification / answer existence / mistake rectification on MedQA or "
    "MedMCQA (k = 5 demos, 2 048-token rule, greedy, 5 repeats); chance-normalised scores ± SE; raw outputs stored.",
)
def lowmid_job(params: LowMidParams, progress: JobContext) -> Report:
    """Generate (here or as llm_eval.batch jobs) and score the low/mid tasks."""
    return lowmid_report(run_lowmid(params, progress))
