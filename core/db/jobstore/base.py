"""The job store's interface: every read and write of the job tables the job lifecycle needs.

``core.jobs`` (submit, execute, reap) and the services call these methods and never build SQL
themselves; :mod:`core.db.jobstore.sqlite` and :mod:`core.db.jobstore.postgres` implement them.
Every implementation keeps the same promises:

* a submission with an idempotency key ``owner`` already used returns the earlier job (``created=False``);
* :meth:`JobStore.claim` moves a job to ``running`` for one worker at a time: a job that ended is
  ``"finished"``, one running with a fresh heartbeat is ``"busy"``, one whose heartbeat is older than
  ``stale_after_s`` is taken over, a cancelled-before-start one ends ``cancelled``;
* an end state is written once (:meth:`JobStore.finish`, :meth:`JobStore.save_report` with ``finish``):
  a job that already ended keeps its end state;
* :meth:`JobStore.requeue` moves a stale job back to ``queued`` with one conditional UPDATE, so of two
  concurrent reapers exactly one gets the job.

Jobs returned are detached from any session (their columns loaded), safe to read after the call.
"""

from __future__ import annotations

import abc
import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from core.db.models import Job, JobStatus

NOTIFY_CHANNEL = "paperworks_jobs"
"""PostgreSQL channel that carries a job id whenever its state changes (the API's wait and SSE listen to it)."""


@dataclass(frozen=True)
class NewJob:
    """A validated job to record as ``queued``."""

    method: str
    params: dict[str, Any]
    queue: str
    owner: str = "local"
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Claim:
    """What :meth:`JobStore.claim` did: ``status`` is ``"claimed"``, ``"finished"``, ``"busy"`` or ``"missing"``;
    ``method`` and ``params`` are the job's (empty when it is missing)."""

    status: str
    method: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NewArtifact:
    """An artifact row for a file already in the artifact store (``id`` chosen by the caller, so the
    report body can name it before the row is written)."""

    id: str
    name: str
    kind: str
    mime: str
    sha256: str
    size: int


class JobStore(abc.ABC):
    """All SQL on ``jobs`` and on the reports and artifacts a job writes with its end state."""

    # --- submission -----------------------------------------------------------------------------
    @abc.abstractmethod
    def create(self, job: NewJob) -> tuple[Job, bool]:
        """Record ``job`` as ``queued`` (the commit waits for durability); ``(job, created)``: with an
        idempotency key its owner used before, the earlier job and ``False``."""

    @abc.abstractmethod
    def create_many(self, jobs: Sequence[NewJob]) -> list[tuple[Job, bool]]:
        """:meth:`create` for each of ``jobs``, in one transaction where no concurrent submission takes one of
        their keys meanwhile (else one by one). An idempotency key used earlier in the same list returns that
        item's job. Results are in order."""

    @abc.abstractmethod
    def fail(self, errors: Mapping[str, str | None], *, message: str = "") -> int:
        """Durably end each queued or running job of ``errors`` (job id -> error text) ``failed``, outside a
        worker's run (the broker refused its message, its retries ran out), in one transaction; returns how
        many ended here (a job that had already ended keeps its end state). Listeners are not notified."""

    # --- execution ------------------------------------------------------------------------------
    @abc.abstractmethod
    def claim(self, job_id: str, *, worker: str, stale_after_s: float) -> Claim:
        """Move the job to ``running`` for ``worker`` (see the module docstring); notifies listeners when the
        job was claimed or found ended."""

    @abc.abstractmethod
    def heartbeat(self, job_id: str) -> bool:
        """Refresh a running job's heartbeat; returns whether its cancellation was requested."""

    @abc.abstractmethod
    def progress(self, job_id: str, *, fraction: float, message: str) -> bool:
        """Write a running job's progress (and heartbeat), notify listeners; returns whether cancellation
        was requested."""

    @abc.abstractmethod
    def finish(self, job_id: str, *, status: JobStatus, message: str = "", error: str | None = None) -> bool:
        """A worker ends its job (``failed``/``cancelled``; success goes through :meth:`save_report`) and
        notifies listeners; ``False`` if the job had already ended."""

    @abc.abstractmethod
    def release(self, job_id: str) -> None:
        """Clear a running job's heartbeat so that a retry (or another worker) takes it over at once."""

    @abc.abstractmethod
    def save_report(
        self,
        job_id: str | None,
        *,
        title: str,
        summary: str,
        body: dict[str, Any],
        artifacts: Sequence[NewArtifact] = (),
        finish: tuple[JobStatus, str] | None = None,
    ) -> str:
        """Store a job's report (replacing an earlier one) and its artifact rows; returns the report id.

        With ``finish=(status, message)`` the job's end state is written in the same transaction, as the
        worker's state change (see :meth:`state_transaction`), and listeners are notified.
        """

    @abc.abstractmethod
    def notify(self, job_id: str) -> None:
        """Tell listeners that ``job_id`` changed (best effort; a no-op where the database has no channel)."""

    @abc.abstractmethod
    def state_transaction(self) -> AbstractContextManager[Session]:
        """A transaction for a worker's own state changes (claim, progress, heartbeat, report + end state).

        It may commit without waiting for durability (PostgreSQL with ``settings.job_async_commit``): what a
        database crash loses is recoverable (a lost claim leaves the job queued, a lost end state leaves it
        running with a stale heartbeat, and the reaper sends either again). Submissions always wait.
        """

    # --- the reaper -----------------------------------------------------------------------------
    @abc.abstractmethod
    def stale_jobs(
        self, *, running_before: dt.datetime, queued_before: dt.datetime, limit: int
    ) -> list[tuple[str, str]]:
        """``(id, status)`` of running jobs whose heartbeat is older than ``running_before`` (or missing) and of
        queued jobs last sent before ``queued_before``, oldest first."""

    @abc.abstractmethod
    def requeue(self, job_id: str, *, running_before: dt.datetime, queued_before: dt.datetime) -> Job | None:
        """Move a stale job back to ``queued`` (re-stamping when it was sent); the job when this call won it,
        ``None`` when it is no longer stale (another reaper took it, or it moved on)."""

    # --- reads ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def get(self, job_id: str) -> Job | None:
        """The job, or ``None``."""

    @abc.abstractmethod
    def columns(self, job_ids: Sequence[str], names: Sequence[str]) -> list[dict[str, Any]]:
        """The named columns of the jobs that exist among ``job_ids``, in one SELECT without a transaction."""

    @abc.abstractmethod
    def count(self, job_ids: Sequence[str], statuses: Sequence[str]) -> int:
        """How many of ``job_ids`` are in one of ``statuses``."""


def detached(session: Session, jobs: Iterator[Job] | Sequence[Job]) -> None:
    """Expunge ``jobs`` from ``session`` so that they outlive it with their loaded columns."""
    for job in {id(j): j for j in jobs}.values():
        session.expunge(job)
