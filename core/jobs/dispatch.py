"""Fan-out for agents: :func:`enqueue` sub-jobs, then :func:`wait` for them.

An agent that splits its work into jobs of the platform (PAE's rollout and
evaluation batches) records each one exactly like the API does — validated params,
a ``queued`` row in the application database, then a message to the worker queue —
and waits on the rows, never on a broker result.

Who sends the message
---------------------
The Celery task lives in ``services/worker``, and ``core`` may not import
``services`` (the layers contract: services -> agents -> methods -> core). So the
worker package *registers* its send function here when it is imported
(``services/worker/tasks/jobs.py`` calls :func:`register_sender`). Every process
that runs jobs — a Celery worker, the API — imports that module, so an agent
running inside a job finds a sender without naming the task or the Celery app. A
process without one (a bare library call) gets a clear :class:`NoSender` error
before anything is recorded; tests and special set-ups pass ``send=`` explicitly.

Waiting
-------
:func:`wait` polls the jobs' rows with exponential backoff (``poll`` up to
``max_poll``), so a long wait costs a few queries a minute. A sub-job still
``queued`` after ``steal_after`` seconds is claimed and run in this process — the
lifecycle's claim makes that safe against a worker picking it up at the same time —
so an orchestrator on a single solo worker cannot deadlock waiting for its own
children; but only a sub-job whose queue this process consumes (``settings.worker_queues``,
:func:`core.jobs.routing.runs_here`): a ``gpu`` sub-job is never pulled into a parent running
on a CPU worker, it waits for a GPU worker. A failed or cancelled sub-job raises
:class:`SubJobFailed`; running past ``timeout`` raises :class:`WaitTimeout` (a
:class:`TransientError`, so the orchestrating job is retried and resumes).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.db.models import Job
from core.jobs.context import JobContext, TransientError
from core.jobs.routing import runs_here

log = logging.getLogger(__name__)

Sender = Callable[[Job], None]

_sender: Sender | None = None
_sender_lock = threading.Lock()
_QUEUE = re.compile(r"^[a-z0-9_-]{1,20}$")
_ENDED = ("succeeded", "failed", "cancelled")
_sleep = time.sleep  # (tests record the delays)


class NoSender(RuntimeError):
    """No function to send a recorded job to the workers is registered in this process."""


class SubJobFailed(RuntimeError):
    """A job :func:`wait` waited for ended ``failed`` or ``cancelled`` (or vanished)."""

    def __init__(self, job: JobRow) -> None:
        self.job = job
        super().__init__(f"sub-job {job.id} ({job.method}) {job.status}: {job.error or job.message or 'no message'}")


class WaitTimeout(TransientError, TimeoutError):
    """Sub-jobs were still unfinished when :func:`wait`'s timeout ran out."""


@dataclass(frozen=True)
class JobRow:
    """A snapshot of one job's row (detached from any session)."""

    id: str
    method: str
    status: str
    queue: str
    message: str
    error: str | None
    worker: str | None
    finished_at: dt.datetime | None

    @classmethod
    def of(cls, job: Job) -> JobRow:
        return cls(
            id=job.id,
            method=job.method,
            status=job.status,
            queue=job.queue,
            message=job.message or "",
            error=job.error,
            worker=job.worker,
            finished_at=job.finished_at,
        )

    @property
    def ended(self) -> bool:
        return self.status in _ENDED


def register_sender(send: Sender | None) -> Sender | None:
    """Install the process's job sender (``None`` removes it); returns the previous one."""
    global _sender
    with _sender_lock:
        previous, _sender = _sender, send
    return previous


def get_sender() -> Sender:
    """The registered sender, or :class:`NoSender`."""
    if _sender is None:
        raise NoSender(
            "no job sender is registered in this process: jobs reach the workers through "
            "services.worker (importing services.worker.tasks.jobs registers it; every worker and "
            "the API do), or pass send="
        )
    return _sender


def enqueue(
    method: str,
    params: dict[str, Any] | None,
    *,
    idempotency_key: str | None = None,
    queue: str | None = None,
    owner: str = "local",
    send: Sender | None = None,
) -> str:
    """Record a job of ``method`` and send it to the workers; returns its id.

    Args:
        method: a registered method name (``"pae.rollouts"``).
        params: its parameters (validated by the method's params model before anything is written).
        idempotency_key: with the same ``owner``, a second call returns the first job's id and sends nothing.
        queue: the queue to send to instead of the method's own (``cpu``/``gpu``); a sub-job whose
            ``device`` asks for a GPU goes to ``gpu`` whatever this says (:func:`core.jobs.routing.job_queue`).
        owner: the owning API key id (``"local"`` for jobs started in-process).
        send: the sender to use instead of the registered one.

    Raises:
        NoSender: no sender registered and none passed (nothing recorded).
        UnknownMethod, InvalidParams: from the registry (nothing recorded).
        NoGpuWorker: ``device=cuda`` where the deployment declares no GPU worker (nothing recorded).
        EnqueueError: the broker refused the message (the job is recorded as failed).
    """
    from core.jobs.lifecycle import submit_job

    if queue is not None and not _QUEUE.match(queue):
        raise ValueError(f"queue {queue!r} must match {_QUEUE.pattern}")
    sender = send or get_sender()
    job, _ = submit_job(method, params, owner=owner, idempotency_key=idempotency_key, enqueue=sender, queue=queue)
    return job.id


def rows(job_ids: Sequence[str]) -> list[JobRow | None]:
    """The current rows of ``job_ids`` (``None`` where a job does not exist), in order."""
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        out = []
        for j in job_ids:
            job = crud.get_job(s, job_id=j)
            out.append(JobRow.of(job) if job is not None else None)
        return out


def wait(
    job_ids: Sequence[str],
    *,
    timeout: float,
    poll: float = 0.5,
    max_poll: float = 10.0,
    backoff: float = 1.5,
    steal_after: float | None = None,
    raise_on_failure: bool = True,
    progress: JobContext | None = None,
    on_steal: Callable[[str], None] | None = None,
) -> list[JobRow]:
    """Block until every job in ``job_ids`` has ended; returns their final rows, in order.

    Args:
        job_ids: the jobs (ids from :func:`enqueue`).
        timeout: seconds before :class:`WaitTimeout`.
        poll: first delay between checks; each further delay is ``backoff`` times longer, at most ``max_poll``.
        steal_after: run a job here once it has been ``queued`` this many seconds (``None``: never), if this
            process consumes its queue (a ``gpu`` job is never run by a process that consumes only ``cpu``).
        raise_on_failure: raise :class:`SubJobFailed` as soon as a job fails or is cancelled (else return it).
        progress: receives "waiting for N sub-job(s)" (and raises ``JobCancelled`` if the waiter is cancelled).
        on_steal: called with the id of each job run here because it stayed queued.
    """
    if timeout <= 0 or poll <= 0 or max_poll < poll or backoff < 1.0:
        raise ValueError(
            f"need timeout > 0, 0 < poll <= max_poll and backoff >= 1 "
            f"(got timeout={timeout}, poll={poll}, max_poll={max_poll}, backoff={backoff})"
        )
    ids = list(dict.fromkeys(job_ids))
    t0 = time.monotonic()
    delay = poll
    stolen: set[str] = set()
    while True:
        current = dict(zip(ids, rows(ids), strict=True))
        for j, row in current.items():
            if row is None:
                raise SubJobFailed(JobRow(j, "?", "missing", "", "", "no such job", None, None))
            if raise_on_failure and row.status in ("failed", "cancelled"):
                raise SubJobFailed(row)
        pending = [j for j, row in current.items() if not row.ended]
        if not pending:
            return [current[j] for j in job_ids]
        waited = time.monotonic() - t0
        if steal_after is not None and waited >= steal_after:
            queued = [
                j for j in pending if current[j].status == "queued" and j not in stolen and runs_here(current[j].queue)
            ]
            if queued:
                from core.jobs.lifecycle import execute_job

                for j in queued:
                    log.info("sub-job %s still queued after %.0fs: running it here", j, waited)
                    stolen.add(j)
                    if on_steal is not None:
                        on_steal(j)
                    execute_job(j)
                continue  # re-read at once: the stolen jobs have ended
        if waited >= timeout:
            raise WaitTimeout(f"sub-jobs still unfinished after {timeout:.0f}s: {sorted(pending)}")
        if progress is not None:
            progress.log(f"waiting for {len(pending)} sub-job(s)")
        _sleep(min(delay, max(0.0, timeout - waited) + 0.01))
        delay = min(max_poll, delay * backoff)
