"""Where rollouts and evaluations run: in this process, or fanned out as Celery jobs.

:class:`InlineDispatcher` calls :mod:`agents.pae.work` directly (bounded parallel
browsers in threads). :class:`JobDispatcher` records one ``pae.rollouts`` /
``pae.evaluate`` job per batch through the platform's job submission, sends each to
the worker queue, and waits by polling the jobs' rows (never ``.get()`` on a result).
A batch still queued after ``steal_after_s`` is claimed and run here — the job
lifecycle's claim makes that safe — so an orchestrator running on a single solo
worker cannot deadlock waiting for its own children.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from agents.pae import work
from core.jobs import JobContext, TransientError, null_context

log = logging.getLogger(__name__)

RUN_JOB_TASK = "paperworks.run_job"  # the platform's generic Celery task (services/worker/tasks/jobs.py)


class Dispatcher(Protocol):
    def rollouts(self, **params: Any) -> list[str]: ...

    def evaluate(self, **params: Any) -> dict[str, int]: ...


class InlineDispatcher:
    """Run everything in this process."""

    def __init__(self, progress: JobContext | None = None) -> None:
        self.progress = progress or null_context()

    def rollouts(self, **params: Any) -> list[str]:
        return work.do_rollouts(**params, progress=self.progress)

    def evaluate(self, **params: Any) -> dict[str, int]:
        return work.do_evaluate(**params, progress=self.progress)


def celery_enqueue(job) -> None:  # noqa: ANN001 - core.db.models.Job
    """Send a recorded job to the platform's worker queue by task name (no import of the worker package)."""
    from celery import current_app

    app = current_app._get_current_object()
    if app.main != "paperworks":
        raise RuntimeError("the paperworks Celery app is not configured in this process "
                           "(import services.worker.celery_app, or pass enqueue=)")
    app.send_task(RUN_JOB_TASK, args=[job.id], queue=job.queue, task_id=f"job-{job.id}")


class JobDispatcher:
    """Fan batches out as jobs of the platform (Celery workers run them)."""

    def __init__(self, *, batch_size: int = 8, enqueue: Callable[[Any], None] | None = None,
                 poll_s: float = 0.5, steal_after_s: float = 30.0, timeout_s: float = 6 * 3600,
                 progress: JobContext | None = None, owner: str = "local") -> None:
        self.batch_size, self.enqueue = batch_size, enqueue or celery_enqueue
        self.poll_s, self.steal_after_s, self.timeout_s = poll_s, steal_after_s, timeout_s
        self.progress = progress or null_context()
        self.owner = owner
        self.stolen = 0
        self.job_ids: list[str] = []

    def _submit(self, method: str, params: dict[str, Any], key: str) -> str:
        from core.jobs.lifecycle import submit_job

        job, _ = submit_job(method, params, owner=self.owner, idempotency_key=key, enqueue=self.enqueue)
        self.job_ids.append(job.id)
        return job.id

    def _wait(self, job_ids: list[str]) -> None:
        from core.db import crud
        from core.db.session import session_scope
        from core.jobs.lifecycle import execute_job

        t0 = time.monotonic()
        pending = set(job_ids)
        while pending:
            with session_scope() as s:
                rows = {j: crud.get_job(s, job_id=j) for j in pending}
                states = {j: (r.status, r.error or r.message) for j, r in rows.items() if r is not None}
            for j, (status, err) in states.items():
                if status == "succeeded":
                    pending.discard(j)
                elif status in ("failed", "cancelled"):
                    raise RuntimeError(f"PAE sub-job {j} {status}: {err}")
            waited = time.monotonic() - t0
            if pending and waited > self.steal_after_s:
                for j in sorted(pending):
                    if states.get(j, ("",))[0] == "queued":
                        log.info("sub-job %s still queued after %.0fs: running it here", j, waited)
                        self.stolen += 1
                        execute_job(j)
            if waited > self.timeout_s:
                raise TransientError(f"PAE sub-jobs still running after {self.timeout_s:.0f}s: {sorted(pending)}")
            self.progress.log(f"waiting for {len(pending)} sub-job(s)")
            if pending:
                time.sleep(self.poll_s)

    def rollouts(self, **params: Any) -> list[str]:
        assignments = list(params.pop("assignments"))
        ids = []
        for i in range(0, len(assignments), self.batch_size):
            chunk = assignments[i:i + self.batch_size]
            p = {**params, "assignments": [list(a) for a in chunk]}
            key = f"pae:{params['run_id']}:{params['phase']}:{params['iteration']}:{chunk[0][0]}-{chunk[-1][0]}"
            ids.append(self._submit("pae.rollouts", p, key))
        self._wait(ids)
        from agents.pae import store

        rows = {r["slot"]: r["id"] for r in store.trajectory_rows(run_id=params["run_id"], phase=params["phase"],
                                                                   iteration=params["iteration"])}
        return [rows[slot] for slot, _ in assignments if slot in rows]

    def evaluate(self, **params: Any) -> dict[str, int]:
        tids = list(params.pop("trajectory_ids"))
        ids = []
        for i in range(0, len(tids), self.batch_size):
            chunk = tids[i:i + self.batch_size]
            key = f"pae:eval:{chunk[0]}:{chunk[-1]}:{len(chunk)}:{params.get('judge')}"
            ids.append(self._submit("pae.evaluate", {**params, "trajectory_ids": chunk}, key))
        self._wait(ids)
        return {"jobs": len(ids)}
