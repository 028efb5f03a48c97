"""``diag.sleep``: a job that takes a known time, reports progress, and can fail on purpose.

Operators use it to check that workers consume a queue, that progress and
cancellation reach the database, and that failures are recorded; the platform's
fault-injection tests and the queue-throughput benchmark use it too.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

from core.jobs import JobContext, Report, register_method


class SleepParams(BaseModel):
    seconds: float = Field(1.0, ge=0.0, le=3600.0, description="How long the job runs.")
    steps: int = Field(10, ge=1, le=10_000, description="Progress reports along the way.")
    fail: bool = Field(False, description="Raise an error at the end instead of succeeding.")
    message: str = Field("diagnostic failure", max_length=500, description="The error message when fail is set.")
    queue_hint: Literal["cpu", "gpu"] = Field("cpu", description="Informational: where the job was meant to run.")


@register_method(
    "diag.sleep",
    title="Diagnostic sleep",
    description="Sleep with progress reports (and optionally fail): checks workers and queues.",
)
def run(params: SleepParams, progress: JobContext) -> Report:
    t0 = time.perf_counter()
    for i in range(params.steps):
        if params.seconds:  # a 0 s job must not yield the CPU (a loaded machine takes ms to give it back)
            time.sleep(params.seconds / params.steps)
        progress((i + 1) / params.steps, f"step {i + 1}/{params.steps}")
    if params.fail:
        raise RuntimeError(params.message)
    elapsed = time.perf_counter() - t0
    report = Report(title="Diagnostic sleep", summary=f"slept {elapsed:.2f} s in {params.steps} steps")
    report.metrics.update({"seconds": round(elapsed, 4), "steps": params.steps})
    return report
