"""A tool call is a job: record it, run it (here or on the workers), follow it, cancel it.

The job's row in the application database is the one source of truth for both ways of
running: :func:`follow` polls it and forwards every change of progress or message to the
MCP client, so a job run by a Celery worker reports exactly like one run in this process.
When the client cancels the request (MCP ``notifications/cancelled``), the job is cancelled
through the lifecycle (:func:`core.db.crud.request_cancel`): a queued job ends at once, a
running one stops at its next progress report.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from core.db import crud
from core.db.models import JobStatus
from core.db.session import session_scope
from core.jobs.lifecycle import execute_job, submit_job

log = logging.getLogger(__name__)

Dispatch = Literal["inline", "queue"]
Progress = Callable[[float, str], Awaitable[None]]


@dataclass(frozen=True)
class JobState:
    """What the client is told about a job while it runs, and at its end."""

    id: str
    status: str
    progress: float
    message: str
    error: str | None

    @property
    def finished(self) -> bool:
        return JobStatus(self.status).finished


def snapshot(job_id: str) -> JobState:
    with session_scope() as s:
        job = crud.get_job(s, job_id=job_id)
        if job is None:
            raise KeyError(job_id)
        return JobState(job.id, job.status, float(job.progress or 0.0), job.message or "", job.error)


def cancel(job_id: str) -> None:
    """Ask the lifecycle to cancel ``job_id`` (and drop its queued message, if a worker has it)."""
    with session_scope() as s:
        job = crud.request_cancel(s, job_id=job_id)
        status = job.status if job else None
    if status == JobStatus.cancelled.value:
        from services.worker.tasks.jobs import revoke

        revoke(job_id)


def _enqueue(job: Any) -> None:
    from services.worker.tasks.jobs import enqueue

    enqueue(job)


def submit(method: str, params: dict[str, Any] | None, *, owner: str, dispatch: Dispatch) -> str:
    """Validate and record the job (raises ``UnknownMethod`` / ``InvalidParams``); queue it if asked."""
    job, _ = submit_job(method, params, owner=owner, enqueue=_enqueue if dispatch == "queue" else None)
    return job.id


async def follow(job_id: str, *, dispatch: Dispatch, report: Progress, poll_s: float = 0.2) -> JobState:
    """Run (``inline``) or await (``queue``) the job, forwarding progress; cancel it if this call is cancelled."""
    async with anyio.create_task_group() as tg:
        if dispatch == "inline":
            # execute_job stops at its next progress report once the job is cancelled, so this thread ends too
            tg.start_soon(_run_inline, job_id)
        try:
            last: tuple[float, str] | None = None
            while True:
                state = await anyio.to_thread.run_sync(snapshot, job_id)
                if (state.progress, state.message) != last and state.status != JobStatus.queued.value:
                    last = (state.progress, state.message)
                    await report(state.progress, state.message)
                if state.finished:
                    return state
                await anyio.sleep(poll_s)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                log.info("MCP request cancelled: cancelling job %s", job_id)
                await anyio.to_thread.run_sync(cancel, job_id)
            raise


async def _run_inline(job_id: str) -> None:
    outcome = await anyio.to_thread.run_sync(execute_job, job_id)
    log.info("job %s ran here: %s", job_id, outcome.status)
