"""Submitting jobs: validate the params, record ``queued`` rows, hand them to the broker.

Nothing is written for a job whose method is unknown or whose params do not validate. A job the
broker refuses is recorded ``failed`` ("could not enqueue") and reported as :class:`EnqueueError`.
Every row is written through the job store (:func:`core.db.jobstore.get_job_store`); a submission's
commit always waits for durability, so an acknowledged job survives a database crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.db.jobstore import NewJob, get_job_store
from core.db.models import Job
from core.jobs.registry import get_method
from core.jobs.routing import job_queue

Enqueue = Callable[[Job], None]


class EnqueueError(RuntimeError):
    """The job was recorded but the broker refused it; the job is marked failed."""


def _mark_refused(refused: list[tuple[str, Exception]]) -> None:
    """Record the jobs the broker refused as failed, in one transaction."""
    errors = {job_id: f"could not enqueue: {type(exc).__name__}: {exc}" for job_id, exc in refused}
    get_job_store().fail(errors, message="could not enqueue")


def _enqueue_error(exc: Exception) -> EnqueueError:
    return EnqueueError(f"the job queue is unavailable: {type(exc).__name__}: {exc}")


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

    ``queue`` overrides the method's own queue (``cpu``/``gpu``); the params' ``device`` decides first
    (:func:`core.jobs.routing.job_queue`: ``cuda`` → ``gpu``, refused with
    :class:`~core.jobs.routing.NoGpuWorker` where no GPU worker is declared and ``enqueue`` is given).

    Raises :class:`~core.jobs.registry.UnknownMethod` or
    :class:`~core.jobs.registry.InvalidParams` before anything is written.
    Returns ``(job, created)``; with a reused idempotency key, the earlier job.
    """
    spec = get_method(method)
    validated = spec.validate(params)
    new = NewJob(
        method=spec.name,
        params=validated.model_dump(mode="json"),
        queue=job_queue(spec, validated, queue=queue, sent=enqueue is not None),  # core.jobs.routing
        owner=owner,
        idempotency_key=idempotency_key,
    )
    job, created = get_job_store().create(new)
    if created and enqueue is not None:
        try:
            enqueue(job)
        except Exception as exc:
            _mark_refused([(job.id, exc)])
            raise _enqueue_error(exc) from exc
    return job, created


@dataclass
class BatchItem:
    """One entry of :func:`submit_jobs`: a method, its params and an optional idempotency key."""

    method: str
    params: dict[str, Any] | None = None
    idempotency_key: str | None = None


@dataclass
class BatchResult:
    """What :func:`submit_jobs` did with one item: a job (new or earlier), or why not."""

    job: Job | None = None
    created: bool = False
    error: Exception | None = None


def submit_jobs(items: list[BatchItem], *, owner: str = "local", enqueue: Enqueue | None = None) -> list[BatchResult]:
    """Validate every item, record the valid ones as queued jobs in ONE transaction, then enqueue them.

    Per-item idempotency: an item whose key ``owner`` already used (or an earlier item of the
    same batch used) gets that job back with ``created=False``. An item that does not validate
    gets its :class:`~core.jobs.registry.UnknownMethod` / :class:`~core.jobs.registry.InvalidParams`
    as ``error`` and writes nothing; the others are unaffected. A job the broker refuses is
    marked failed and its result carries an :class:`EnqueueError`.
    """
    results = [BatchResult() for _ in items]
    valid: list[tuple[int, NewJob]] = []
    for i, item in enumerate(items):
        try:
            spec = get_method(item.method)
            params = spec.validate(item.params).model_dump(mode="json")
            queue = job_queue(spec, params, sent=enqueue is not None)  # core.jobs.routing
        except (KeyError, ValueError) as exc:  # UnknownMethod, InvalidParams (NoGpuWorker)
            results[i].error = exc
            continue
        valid.append(
            (
                i,
                NewJob(method=spec.name, params=params, queue=queue, owner=owner, idempotency_key=item.idempotency_key),
            )
        )
    recorded = get_job_store().create_many([new for _, new in valid]) if valid else []
    for (i, _), (job, created) in zip(valid, recorded, strict=True):
        results[i].job, results[i].created = job, created
    if enqueue is not None:
        refused: list[tuple[BatchResult, Exception]] = []
        for r in results:
            if r.created and r.job is not None:
                try:
                    enqueue(r.job)
                except Exception as exc:
                    refused.append((r, exc))
        if refused:
            _mark_refused([(r.job.id, exc) for r, exc in refused])
            for r, exc in refused:
                r.error = _enqueue_error(exc)
    return results
