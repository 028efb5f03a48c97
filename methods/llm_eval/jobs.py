"""``llm_eval.batch``: generate a batch of requests for an evaluation run and store the raw outputs."""

from __future__ import annotations

from core.jobs import JobContext, Report, register_method
from methods.llm_eval.harness import BatchParams, generate_here, stored_outputs


@register_method(
    "llm_eval.batch",
    title="LLM evaluation: one batch of generations",
    description="Runs up to 200 prompts of an evaluation run through the gateway and stores each raw output "
    "(rows already stored are skipped, so a redelivered batch is idempotent).",
)
def batch_job(params: BatchParams, progress: JobContext) -> Report:
    """Generate the batch's missing outputs and store them under ``run_id``."""
    have = stored_outputs(params.run_id, [r.key for r in params.requests])
    todo = [r for r in params.requests if r.key not in have]
    outs = generate_here(params.run_id, todo, params.model, concurrency=params.concurrency, progress=progress)
    errors = sum(1 for o in outs.values() if o.error)
    report = Report(
        title=f"Batch of {len(params.requests)} generations",
        summary=f"{len(outs)} generated now, {len(have)} already stored, {errors} failed.",
    )
    report.metrics.update({"generated": len(outs), "skipped": len(have), "errors": errors})
    return report
