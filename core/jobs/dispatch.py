"""Fan-out: :func:`map_jobs` runs a list of params as sub-jobs or inline; :func:`enqueue` and :func:`wait` below it.

:func:`map_jobs` is what a reproduction or a study calls: one registered method over a list of params,
as sub-jobs on the workers when a sender is registered (``dispatch="auto"``, or ``"jobs"`` to insist),
else one after the other in this process with a progress share each (``dispatch="inline"`` forces it).
The sub-jobs keep their params' ``device``/``amp`` (so :mod:`core.jobs.routing` sends a GPU sub-job to
the ``gpu`` queue) and :func:`wait`'s steal guard (a stalled sub-job is run here only if this process
consumes its queue).

An agent that splits its work into jobs of the platform (PAE's rollout and
evaluation batches) records each one exactly like the API does — validated params,
a ``queued`` row in the application database, then a message to the worker queue —
and waits on the rows, never on a broker result.

Who sends the message
---------------------
The Celery task lives in ``services/worker``, and ``core`` may not import
``services`` (the layers contract: services -> agents -> methods -> core). So the
worker package *registers* its send function in :mod:`core.jobs.sender` when it is
imported (``services/worker/tasks/jobs.py`` calls :func:`register_sender`, re-exported
here). Every process that runs jobs — a Celery worker, the API — imports that module,
so an agent running inside a job finds a sender without naming the task or the Celery
app. A process without one (a bare library call) gets a clear :class:`NoSender` error
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
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from core.db.models import Job
from core.jobs.context import JobContext, TransientError, null_context
from core.jobs.routing import runs_here
from core.jobs.sender import NoSender, Sender, get_sender, has_sender, register_sender

log = logging.getLogger(__name__)

_QUEUE = re.compile(r"^[a-z0-9_-]{1,20}$")
_ENDED = ("succeeded", "failed", "cancelled")
_sleep = time.sleep  # (tests record the delays)

T = TypeVar("T")
Dispatch = Literal["auto", "jobs", "inline"]

__all__ = [
    "Dispatch",
    "JobRow",
    "NoSender",
    "Sender",
    "SubJobFailed",
    "WaitTimeout",
    "enqueue",
    "get_sender",
    "has_sender",
    "map_jobs",
    "register_sender",
    "rows",
    "use_jobs",
    "wait",
]


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
    from core.jobs.submit import submit_job

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
                from core.jobs.execute import execute_job

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


def use_jobs(dispatch: Dispatch, send: Sender | None = None) -> bool:
    """Whether a fan-out sends sub-jobs: ``"jobs"`` (a sender is required: :class:`NoSender` otherwise),
    ``"auto"`` (when ``send`` is given or a sender is registered) or ``"inline"`` (never)."""
    if dispatch == "inline":
        return False
    if dispatch not in ("auto", "jobs"):
        raise ValueError(f"dispatch must be 'auto', 'jobs' or 'inline', got {dispatch!r}")
    if send is not None or has_sender():
        return True
    if dispatch == "jobs":
        get_sender()  # raises NoSender, saying how to get one
    return False


def map_jobs(
    method: str,
    params: Sequence[BaseModel | Mapping[str, Any]],
    *,
    inline: Callable[[Any, JobContext], T] | None = None,
    result: Callable[[dict[str, Any]], T] | None = None,
    dispatch: Dispatch = "auto",
    progress: JobContext | None = None,
    key: str | None = None,
    keys: Sequence[str] | None = None,
    timeout: float = 6 * 3600,
    steal_after: float | None = 60.0,
    label: Callable[[Any], str] | None = None,
    owner: str = "local",
    send: Sender | None = None,
) -> list[T]:
    """Run the registered ``method`` once per params, as sub-jobs or in this process; one result each, in order.

    Every params (a model or a mapping) is validated by ``method``'s params model first, so a bad one fails
    the fan-out before anything is sent. Then, when :func:`use_jobs` says so:

    * **sub-jobs**: each is :func:`enqueue`-d with the idempotency key ``"<key>:<run>:<k>"`` (``key``
      defaults to ``method``; ``run`` is the calling job's id, so a retried parent finds its sub-jobs
      again, else a fresh id) or ``keys[k]`` when ``keys`` are given (content keys: any run asking for
      the same work finds the same job), routed by its own ``device``/``amp``; :func:`wait` waits for them (a
      sub-job still queued after ``steal_after`` seconds runs here if this process consumes its queue);
      the result of each is ``result(data)`` of its stored report's ``data`` (``data`` itself by default);
    * **inline**: in turn, ``inline(params_model, share)`` with ``share`` the k-th equal share of
      ``progress`` (default: ``result`` of the registered job's ``Report.data``); ``label(params)``, when
      given, names each one on the progress bar.

    Raises:
        NoSender: ``dispatch="jobs"`` without a sender.
        InvalidParams, UnknownMethod: from the registry, before anything runs.
        SubJobFailed, WaitTimeout: from :func:`wait`.
    """
    from core.jobs.registry import get_method

    progress = progress or null_context()
    spec = get_method(method)
    models = [spec.validate(p.model_dump() if isinstance(p, BaseModel) else dict(p)) for p in params]
    pick = result or (lambda data: data)  # type: ignore[return-value]
    if keys is not None and len(keys) != len(models):
        raise ValueError(f"keys: one per params ({len(models)}), got {len(keys)}")
    if not models:
        return []
    if use_jobs(dispatch, send):
        from core.db import crud
        from core.db.session import session_scope

        run = progress.job_id or uuid.uuid4().hex
        prefix = key or method
        ids = [
            enqueue(
                method,
                m.model_dump(),
                idempotency_key=keys[k] if keys is not None else f"{prefix}:{run}:{k}",
                owner=owner,
                send=send,
            )
            for k, m in enumerate(models)
        ]
        progress(0.0, f"{len(ids)} sub-jobs queued")
        wait(ids, timeout=timeout, steal_after=steal_after, progress=progress)
        with session_scope() as s:
            bodies = [crud.get_report_for_job(s, job_id=j) for j in ids]
            return [pick(body.body.get("data") or {}) for body in bodies]
    out: list[T] = []
    n = len(models)
    for k, m in enumerate(models):
        share = progress.sub(k / n, (k + 1) / n)
        if label is not None:
            share(0.0, label(m))
        out.append(inline(m, share) if inline is not None else pick(spec.run(m, share).data))
    return out
