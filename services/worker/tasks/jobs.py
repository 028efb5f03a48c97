"""The generic task: run any registered method's job by id.

Tasks take ids and re-read rows (Celery's best practice); the job lifecycle
(:mod:`core.jobs.execute`, :mod:`core.jobs.reap`) makes redelivery safe.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from celery import Task
from celery.signals import worker_ready, worker_shutdown

from core.config import get_settings
from core.jobs.dispatch import register_sender
from core.jobs.execute import execute_job
from core.jobs.reap import Reaper
from services.worker.celery_app import app

log = logging.getLogger(__name__)
RUN_JOB = "paperworks.run_job"


@app.task(name=RUN_JOB, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def run_job(self: Task, job_id: str) -> str:
    """Run job ``job_id``; retry with backoff on transient errors or while another worker holds it."""
    settings = get_settings()
    outcome = execute_job(job_id)
    if outcome.retry:
        retries = self.request.retries
        if outcome.status == "busy":
            # a duplicate message (broker redelivery, a reaper re-send) while the job runs elsewhere with a
            # fresh heartbeat: drop it. If that worker dies, the reaper re-enqueues the job.
            return outcome.status
        if retries < settings.job_max_retries:
            raise self.retry(countdown=min(60, 2**retries), max_retries=settings.job_max_retries)
        from core.db.jobstore import get_job_store

        get_job_store().fail({job_id: f"gave up after {retries} retries: {outcome.error}"})
    return outcome.status


_reaper: Reaper | None = None


@worker_ready.connect
def _start_reaper(**_: object) -> None:
    """Every worker sweeps for jobs whose worker died (idempotent across workers)."""
    global _reaper
    if _reaper is None:
        _reaper = Reaper(enqueue=enqueue)
        _reaper.start()


@worker_shutdown.connect
def _stop_reaper(**_: object) -> None:
    if _reaper is not None:
        _reaper.stop.set()


_producer: ContextVar = ContextVar("paperworks_producer", default=None)


@contextmanager
def one_connection() -> Iterator[None]:
    """Send every :func:`enqueue` inside the block through one broker producer (a batch's messages
    share a connection and channel instead of taking one from the pool per message)."""
    try:
        block = app.producer_or_acquire()
        producer = block.__enter__()
    except Exception:  # broker down: each enqueue then fails on its own and its job is marked failed
        log.warning("could not open a broker producer for a batch", exc_info=True)
        yield
        return
    token = _producer.set(producer)
    try:
        yield
    finally:
        _producer.reset(token)
        block.__exit__(None, None, None)


def enqueue(job) -> None:
    """Send a recorded job to its queue (the API's and CLI's ``enqueue`` callback)."""
    run_job.apply_async(args=[job.id], queue=job.queue, task_id=f"job-{job.id}", producer=_producer.get())


# Agents that fan out sub-jobs (core.jobs.dispatch.enqueue) send through this; core cannot import services.
register_sender(enqueue)


def revoke(job_id: str) -> None:
    """Best-effort: drop a queued message for a cancelled job (workers also check the DB)."""
    try:
        app.control.revoke(f"job-{job_id}")
    except Exception:  # the embedded broker has no broadcast support; the DB flag suffices
        log.debug("revoke not supported by this broker", exc_info=True)
