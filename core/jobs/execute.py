"""Executing a job: claim → run (heartbeats, progress, cancellation) → report and end state.

Job state lives in the application database, never in the broker's result backend; every
state change goes through the job store (:func:`core.db.jobstore.get_job_store`).
:func:`execute_job` is idempotent: a message delivered twice (``acks_late`` after a worker
died) runs a job at most once to completion, because a job that already ended is skipped and
a running one whose heartbeat is fresh is left to its live worker.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.artifacts import get_artifact_store
from core.config import get_settings
from core.db.jobstore import NewArtifact, get_job_store
from core.db.models import JobStatus, new_id
from core.db.session import database_label
from core.jobs.context import JobCancelled, JobContext, TransientError
from core.jobs.registry import get_method
from core.jobs.report import Report
from core.jobs.submit import submit_job

log = logging.getLogger(__name__)


def worker_name() -> str:
    """``host:pid`` of this process: the ``worker`` a claimed job records."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class Outcome:
    """What :func:`execute_job` did with one delivery."""

    status: str  # "succeeded", "failed", "cancelled", "finished" (already ended), "busy", "missing"
    error: str | None = None
    retry: bool = False


def notify_job_changed(job_id: str) -> None:
    """Tell listeners (the API's long-polls and event streams) that ``job_id`` changed; PostgreSQL only."""
    get_job_store().notify(job_id)


class _Heartbeats:
    """One thread per process refreshes the heartbeat of every job running here.

    A job is registered when claimed and beats for the first time only ``every_s``
    after that: a job shorter than the heartbeat interval costs no heartbeat write
    and no thread start (the claim itself set ``heartbeat_at``).
    """

    def __init__(self) -> None:
        self._due: dict[str, tuple[float, float]] = {}  # job id -> (next beat, interval)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, job_id: str, every_s: float) -> None:
        with self._lock:
            self._due[job_id] = (time.monotonic() + every_s, every_s)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True, name="job-heartbeats")
                self._thread.start()
        self._wake.set()

    def remove(self, job_id: str) -> None:
        with self._lock:
            self._due.pop(job_id, None)

    def running(self) -> list[str]:
        with self._lock:
            return list(self._due)

    def _run(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                due = [j for j, (t, _) in self._due.items() if t <= now]
                for j in due:
                    self._due[j] = (now + self._due[j][1], self._due[j][1])
                nxt = min((t for t, _ in self._due.values()), default=now + 60.0)
            for job_id in due:
                try:
                    get_job_store().heartbeat(job_id)
                except Exception:  # the next beat retries
                    log.warning("heartbeat failed for %s", job_id, exc_info=True)
            self._wake.wait(max(0.0, nxt - time.monotonic()))
            self._wake.clear()


_heartbeats = _Heartbeats()

PROGRESS_WRITE_S = 0.25
"""At most one progress write per job per this many seconds; the first one only this long after the claim."""


def _db_sink(job_id: str, every_s: float = PROGRESS_WRITE_S) -> Callable[[float, str], bool]:
    """Progress (and the cancellation check) through the database, throttled in time.

    A job that ends within ``every_s`` writes no progress at all: its end state is written
    with its report in one transaction. Longer jobs write at most every ``every_s``, which
    is also how often they notice a cancellation.
    """
    last = {"t": time.monotonic()}

    def sink(fraction: float, message: str) -> bool:
        now = time.monotonic()
        if now - last["t"] < every_s:
            return False
        last["t"] = now
        return get_job_store().progress(job_id, fraction=fraction, message=message)

    return sink


def persist_report(job_id: str | None, report: Report, *, finish: tuple[JobStatus, str] | None = None) -> str:
    """Store the report's pending files as artifacts and the report itself; returns the report id.

    With ``finish=(status, message)`` the job's end state is written in the same transaction
    (one commit for report, artifacts and status).
    """
    store = get_artifact_store()
    artifacts = []
    for name, data in report.pending_files().items():  # bytes first, outside the transaction
        ref = report.artifact(name)
        stored = store.put_bytes(data, name=name, mime=ref.mime if ref else None)
        art = NewArtifact(
            id=new_id(),
            name=name,
            kind=ref.kind if ref else "file",
            mime=stored.mime,
            sha256=stored.sha256,
            size=stored.size,
        )
        report.mark_stored(name, art.id)
        artifacts.append(art)
    return get_job_store().save_report(
        job_id,
        title=report.title,
        summary=report.summary,
        body=report.model_dump(mode="json"),
        artifacts=artifacts,
        finish=finish,
    )


def execute_job(
    job_id: str, *, worker: str | None = None, extra_sink: Callable[[float, str], None] | None = None
) -> Outcome:
    """Run a queued job to its end, writing every state change to the database."""
    settings = get_settings()
    jobs = get_job_store()
    claim = jobs.claim(job_id, worker=worker or worker_name(), stale_after_s=settings.job_stale_after_s)
    if claim.status == "missing":
        # a deleted job, or a message of another deployment sharing this broker database (its worker then
        # waits in vain for the job: give each deployment, and each test run, a broker database of its own)
        log.warning("job %s not run here: missing (no such job in %s)", job_id, database_label())
    elif claim.status != "claimed":
        log.info("job %s not run here: %s", job_id, claim.status)
    if claim.status != "claimed":
        return Outcome(status=claim.status, retry=claim.status == "busy")
    method, params = claim.method, claim.params

    _heartbeats.add(job_id, settings.job_heartbeat_s)
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
        persist_report(job_id, report, finish=(JobStatus.succeeded, report.summary[:500] or "done"))
        return Outcome(status="succeeded")
    except JobCancelled:
        jobs.finish(job_id, status=JobStatus.cancelled, message="cancelled")
        return Outcome(status="cancelled")
    except TransientError as exc:
        # leave the job running-but-stale so the retry (or another worker) takes it over
        jobs.release(job_id)
        return Outcome(status="failed", error=str(exc), retry=True)
    except Exception as exc:
        tb = traceback.format_exc(limit=20)
        log.error("job %s (%s) failed: %s", job_id, method, exc)
        jobs.finish(job_id, status=JobStatus.failed, message=f"{type(exc).__name__}: {exc}"[:500], error=tb)
        return Outcome(status="failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        _heartbeats.remove(job_id)


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
