"""The job lifecycle: submit (queued) → run (running) → succeeded / failed / cancelled.

Split by stage (issue #48): :mod:`core.jobs.submit` (validate, record, enqueue),
:mod:`core.jobs.execute` (claim, heartbeats, progress, report and end state) and
:mod:`core.jobs.reap` (re-send jobs whose worker died or whose message was lost). Every
statement on the job tables is in :mod:`core.db.jobstore`. This module re-exports the
public names so that ``from core.jobs.lifecycle import …`` keeps working.
"""

from __future__ import annotations

from core.db.jobstore import NOTIFY_CHANNEL, state_transaction
from core.jobs.execute import Outcome, execute_job, notify_job_changed, persist_report, run_inline, worker_name
from core.jobs.reap import Reaper, reap_stale
from core.jobs.submit import BatchItem, BatchResult, Enqueue, EnqueueError, submit_job, submit_jobs

__all__ = [
    "NOTIFY_CHANNEL",
    "BatchItem",
    "BatchResult",
    "Enqueue",
    "EnqueueError",
    "Outcome",
    "Reaper",
    "execute_job",
    "notify_job_changed",
    "persist_report",
    "reap_stale",
    "run_inline",
    "state_transaction",
    "submit_job",
    "submit_jobs",
    "worker_name",
]
