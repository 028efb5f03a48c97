"""The job lifecycle: submit (queued) → run (running) → succeeded / failed / cancelled.

Job state lives in the application database, never in the broker's result
backend. :func:`execute_job` is idempotent: a message delivered twice (``acks_late``
after a worker died) runs a job at most once to completion, because a job that
already ended is skipped and a running one whose heartbeat is fresh is left to its
live worker.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.artifacts import get_artifact_store
from core.config import get_settings
from core.db import crud
from core.db.models import Job, JobStatus
from core.db.session import session_scope
from core.jobs.context import JobCancelled, JobContext, TransientError
from core.jobs.registry import get_method
from core.jobs.report import Report

log = logging.getLogger(__name__)

Enqueue = Callable[[Job], None]


class EnqueueError(RuntimeError):
    """The job was recorded but the broker refused it; the job is marked failed."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def submit_job(
    method: str,
    params: dict[str, Any] | None,
    *,
    owner: str = "local",
    idempotency_key: str | None = None,
    enqueue: Enqueue | None = None,
    queue: str | None = None,
) -> tuple[Job, bool]:
    """Validate params, record a queued job, and hand it to ``enqueue`` (if created).

    ``queue`` overrides the method's own queue (``cpu``/``gpu``).

    Raises :class:`~core.jobs.registry.UnknownMethod` or
    :class:`~core.jobs.registry.InvalidParams` before anything is written.
    Returns ``(job, created)``; with a reused idempotency key, the earlier job.
    """
    spec = get_method(method)
    validated = spec.validate(params)
    with session_scope() as s:
        job, created = crud.create_job(
            s,
            method=spec.name,
            params=validated.model_dump(mode="json"),
            queue=queue or spec.queue,
            owner=owner,
            idempotency_key=idempotency_key,
        )
        s.flush()
        s.expunge(job)
    if created and enqueue is not None:
        try:
            enqueue(job)
        except Exception as exc:
            with session_scope() as s:
                crud.finish_job(
                    s,
                    job_id=job.id,
                    status=JobStatus.failed,
                    message="could not enqueue",
                    error=f"could not enqueue: {type(exc).__name__}: {exc}",
                )
            raise EnqueueError(f"the job queue is unavailable: {type(exc).__name__}: {exc}") from exc
    return job, created


@dataclass
class Outcome:
    """What :func:`execute_job` did with one delivery."""

    status: str  # "succeeded", "failed", "cancelled", "finished" (already ended), "busy", "missing"
    error: str | None = None
    retry: bool = False


class _Heartbeat(threading.Thread):
    """Refreshes a running job's heartbeat so a redelivery knows its worker is alive."""

    def __init__(self, job_id: str, every_s: float) -> None:
        super().__init__(daemon=True, name=f"heartbeat-{job_id[:8]}")
        self.job_id, self.every_s = job_id, every_s
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.every_s):
            try:
                with session_scope() as s:
                    crud.touch_job(s, job_id=self.job_id)
            except Exception:  # the next beat retries
                log.warning("heartbeat failed for %s", self.job_id, exc_info=True)


def _db_sink(job_id: str) -> Callable[[float, str], bool]:
    def sink(fraction: float, message: str) -> bool:
        with session_scope() as s:
            return crud.touch_job(s, job_id=job_id, progress=fraction, message=message)

    return sink


def persist_report(job_id: str | None, report: Report) -> str:
    """Store the report's pending files as artifacts and the report itself; returns the report id."""
    store = get_artifact_store()
    with session_scope() as s:
        for name, data in report.pending_files().items():
            ref = report.artifact(name)
            stored = store.put_bytes(data, name=name, mime=ref.mime if ref else None)
            row = crud.add_artifact(
                s,
                job_id=job_id,
                name=name,
                kind=ref.kind if ref else "file",
                mime=stored.mime,
                sha256=stored.sha256,
                size=stored.size,
            )
            report.mark_stored(name, row.id)
        row = crud.save_report(
            s, job_id=job_id, title=report.title, summary=report.summary, body=report.model_dump(mode="json")
        )
        return row.id


def execute_job(
    job_id: str, *, worker: str | None = None, extra_sink: Callable[[float, str], None] | None = None
) -> Outcome:
    """Run a queued job to its end, writing every state change to the database."""
    settings = get_settings()
    worker = worker or worker_name()
    with session_scope() as s:
        claim = crud.claim_job(s, job_id=job_id, worker=worker, stale_after_s=settings.job_stale_after_s)
        job = crud.get_job(s, job_id=job_id)
        method, params = (job.method, dict(job.params)) if job else ("", {})
    if claim != "claimed":
        log.info("job %s not run here: %s", job_id, claim)
        return Outcome(status=claim, retry=claim == "busy")

    heartbeat = _Heartbeat(job_id, settings.job_heartbeat_s)
    heartbeat.start()
    db_sink = _db_sink(job_id)

    def sink(fraction: float, message: str) -> bool:
        if extra_sink is not None:
            extra_sink(fraction, message)
        return db_sink(fraction, message)

    ctx = JobContext(sink, job_id=job_id, workdir=settings.home / "jobs" / job_id)
    try:
        spec = get_method(method)
        report = spec.run(spec.validate(params), ctx)
        if not isinstance(report, Report):
            raise TypeError(f"{method} returned {type(report).__name__}, not a Report")
        persist_report(job_id, report)
        with session_scope() as s:
            crud.finish_job(s, job_id=job_id, status=JobStatus.succeeded, message=report.summary[:500] or "done")
        return Outcome(status="succeeded")
    except JobCancelled:
        with session_scope() as s:
            crud.finish_job(s, job_id=job_id, status=JobStatus.cancelled, message="cancelled")
        return Outcome(status="cancelled")
    except TransientError as exc:
        # leave the job running-but-stale so the retry (or another worker) takes it over
        with session_scope() as s:
            s.get(Job, job_id).heartbeat_at = None
        return Outcome(status="failed", error=str(exc), retry=True)
    except Exception as exc:
        tb = traceback.format_exc(limit=20)
        log.error("job %s (%s) failed: %s", job_id, method, exc)
        with session_scope() as s:
            crud.finish_job(
                s, job_id=job_id, status=JobStatus.failed, message=f"{type(exc).__name__}: {exc}"[:500], error=tb
            )
        return Outcome(status="failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        heartbeat.stop.set()


def run_inline(
    method: str,
    params: dict[str, Any] | None,
    *,
    sink: Callable[[float, str], None] | None = None,
    owner: str = "local",
) -> tuple[str, Outcome]:
    """Record a job and run it in this process (the CLI's ``run`` without ``--remote``)."""
    job, _ = submit_job(method, params, owner=owner)
    return job.id, execute_job(job.id, extra_sink=sink)
