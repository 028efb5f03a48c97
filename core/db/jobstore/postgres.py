"""The PostgreSQL job store: the hot paths of a job in one statement each, and LISTEN/NOTIFY.

On top of the portable store (:class:`~core.db.jobstore.sql.SqlJobStore`), which it falls back to for
every case these paths do not cover:

* **submit**: one ``INSERT … ON CONFLICT (owner, idempotency_key) DO NOTHING RETURNING id`` in autocommit
  mode, the commit waiting for the WAL flush (an acknowledged submission survives a database crash);
  a taken key falls back to the ORM path, which returns the earlier job;
* **claim**: one ``UPDATE … RETURNING`` of a queued, not-cancelled job that also notifies listeners
  (a CTE with ``pg_notify``);
* **report + end state**: one statement (data-modifying CTEs) that upserts the report, ends the job
  and notifies listeners, when the report has no files;
* **the worker's state changes** run on connections opened with ``synchronous_commit=off`` when
  ``settings.job_async_commit`` (see :meth:`~core.db.jobstore.base.JobStore.state_transaction`).

The one-statement paths run on their own engine without pre-ping, BEGIN or COMMIT (a single statement
is atomic by itself; a connection the server dropped is retried once on a fresh one). Their statements
are built once with bound parameters: building an ORM statement per job cost more CPU than its round trip.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Engine, bindparam, create_engine, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from core.config import get_settings
from core.db.jobstore.base import NOTIFY_CHANNEL, Claim, NewArtifact, NewJob
from core.db.jobstore.sql import SqlJobStore
from core.db.models import Job, JobStatus, ReportRow, new_id, utcnow
from core.lazy import locked_cache

log = logging.getLogger(__name__)


@locked_cache(maxsize=8)  # an engine (a pool) per URL: built once under concurrent first use
def _engine(url: str, async_commit: bool, pre_ping: bool) -> Engine:
    """Connections for the one-statement paths and the worker's state changes, opened with
    ``synchronous_commit=off`` when ``async_commit`` (a connection option: no extra round trip per transaction)."""
    args = {"options": "-c synchronous_commit=off"} if async_commit else {}
    return create_engine(url, pool_pre_ping=pre_ping, connect_args=args)


@functools.cache
def _insert_stmt() -> Any:
    """``INSERT INTO jobs … ON CONFLICT (owner, idempotency_key) DO NOTHING RETURNING id`` (a NULL key never
    conflicts)."""
    return insert(Job.__table__).on_conflict_do_nothing(constraint="uq_jobs_owner_idem").returning(Job.__table__.c.id)


def _notified() -> Any:
    """A CTE that notifies the job's listeners (``p_id``) as part of the statement it is added to."""
    return select(func.pg_notify(NOTIFY_CHANNEL, bindparam("p_id")).label("n_")).cte("notified")


@functools.cache
def _claim_stmt() -> Any:
    """Move a queued, not-cancelled job to running and notify, ``RETURNING method, params`` (bound: ``p_id``,
    ``p_worker``, ``p_now``)."""
    jobs = Job.__table__
    now = bindparam("p_now", type_=jobs.c.started_at.type)
    note = _notified()
    return (
        update(jobs)
        .where(
            jobs.c.id == bindparam("p_id"), jobs.c.status == JobStatus.queued.value, jobs.c.cancel_requested.is_(False)
        )
        .values(
            status=JobStatus.running.value,
            attempts=jobs.c.attempts + 1,
            worker=bindparam("p_worker"),
            started_at=func.coalesce(jobs.c.started_at, now),
            heartbeat_at=now,
            error=None,
        )
        .add_cte(note)
        .returning(jobs.c.method, jobs.c.params, select(note.c.n_).scalar_subquery())
    )


@functools.cache
def _finish_stmt(status: JobStatus) -> Any:
    """Upsert the report, end the job (if still queued or running) and notify, in ONE statement; built once per
    end state, bound per job (``p_id``, ``p_report_id``, ``p_title``, ``p_summary``, ``p_body``, ``p_now``,
    ``p_message``). Returns ``(report id, …)``, or no row when the job had already ended (the report is
    upserted all the same: a data-modifying CTE always runs)."""
    jobs, reports = Job.__table__, ReportRow.__table__
    now = bindparam("p_now", type_=reports.c.created_at.type)
    upsert = insert(reports).values(
        id=bindparam("p_report_id"),
        job_id=bindparam("p_id"),
        title=bindparam("p_title"),
        summary=bindparam("p_summary"),
        body=bindparam("p_body", type_=reports.c.body.type),
        created_at=now,
    )
    rep = (
        upsert.on_conflict_do_update(
            index_elements=[reports.c.job_id],
            set_={c: upsert.excluded[c] for c in ("title", "summary", "body", "created_at")},
        )
        .returning(reports.c.id)
        .cte("saved_report")
    )
    note = _notified()
    return (
        update(jobs)
        .where(jobs.c.id == bindparam("p_id"), jobs.c.status.in_([JobStatus.running.value, JobStatus.queued.value]))
        .values(
            status=status.value,
            finished_at=bindparam("p_now", type_=jobs.c.finished_at.type),
            message=bindparam("p_message"),
            error=None,
            progress=1.0 if status is JobStatus.succeeded else jobs.c.progress,
        )
        .add_cte(rep)
        .add_cte(note)
        .returning(select(rep.c.id).scalar_subquery(), select(note.c.n_).scalar_subquery())
    )


class PostgresJobStore(SqlJobStore):
    """:class:`~core.db.jobstore.base.JobStore` on PostgreSQL."""

    def _database_url(self) -> str:
        return self.url or str(get_settings().database_url)

    def _statement(self, stmt: Any, params: dict[str, Any] | None = None) -> Any:
        """Run ONE statement in autocommit mode (no pre-ping, BEGIN or COMMIT) and return its first row; on the
        worker's engine (``synchronous_commit=off`` with ``settings.job_async_commit``)."""
        engine = _engine(self._database_url(), get_settings().job_async_commit, False)
        for attempt in (0, 1):
            try:
                with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                    return c.execute(stmt, params).first() if params is not None else c.execute(stmt).first()
            except DBAPIError as exc:
                if attempt or not exc.connection_invalidated:
                    raise
        return None  # pragma: no cover - the loop returns or raises

    # --- submission -----------------------------------------------------------------------------
    def create(self, job: NewJob) -> tuple[Job, bool]:
        row = self._insert(job)
        if row is not None:
            return row, True
        return super().create(job)  # the key was used before: the ORM path finds the earlier job

    def _insert(self, job: NewJob) -> Job | None:
        """Record a queued job in ONE durable round trip; ``None`` when its idempotency key is taken. The job
        returned is built from the same values (every column has them), detached from any session."""
        values = {
            "method": job.method,
            "params": job.params,
            "queue": job.queue,
            "owner": job.owner,
            "idempotency_key": job.idempotency_key,
            "id": new_id(),
            "status": JobStatus.queued.value,
            "progress": 0.0,
            "message": "",
            "attempts": 0,
            "cancel_requested": False,
            "created_at": utcnow(),
        }
        engine = _engine(self._database_url(), False, False)  # durable: the commit waits for the WAL flush
        for attempt in (0, 1):
            try:
                with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                    row = c.execute(_insert_stmt(), values).first()
                break
            except IntegrityError:
                if attempt:  # our own first attempt was committed before its connection dropped
                    return Job(**values)
                raise
            except DBAPIError as exc:
                if attempt or not exc.connection_invalidated:
                    raise
        return Job(**values) if row is not None else None

    # --- execution ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def state_transaction(self) -> Iterator[Session]:
        if not get_settings().job_async_commit:
            with super().state_transaction() as s:
                yield s
            return
        s = _async_commit_sessions(self._database_url())()
        try:
            yield s
            s.commit()
        except BaseException:
            s.rollback()
            raise
        finally:
            s.close()

    def claim(self, job_id: str, *, worker: str, stale_after_s: float) -> Claim:
        row = self._statement(_claim_stmt(), {"p_id": job_id, "p_worker": worker, "p_now": utcnow()})
        if row is not None:  # the common case in one round trip (it notified)
            return Claim("claimed", row[0], dict(row[1] or {}))
        return super().claim(job_id, worker=worker, stale_after_s=stale_after_s)

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
        if finish is not None and job_id is not None and not artifacts:
            status, message = finish
            params = {
                "p_id": job_id,
                "p_report_id": new_id(),
                "p_title": title[:500],
                "p_summary": summary,
                "p_body": body,
                "p_now": utcnow(),
                "p_message": message[:2000],
            }
            row = self._statement(_finish_stmt(status), params)
            if row is not None:
                return row[0]
            # the job had already ended: the portable path rewrites the report and leaves the end state
        return super().save_report(job_id, title=title, summary=summary, body=body, artifacts=artifacts, finish=finish)

    def _upsert_report(self, s: Session, job_id: str | None, *, title: str, summary: str, body: dict[str, Any]) -> str:
        if job_id is None:
            return super()._upsert_report(s, job_id, title=title, summary=summary, body=body)
        values = {"title": title[:500], "summary": summary, "body": body, "created_at": utcnow()}
        stmt = insert(ReportRow).values(id=new_id(), job_id=job_id, **values)
        stmt = stmt.on_conflict_do_update(index_elements=[ReportRow.job_id], set_=values).returning(ReportRow.id)
        return s.execute(stmt).scalar_one()

    def notify(self, job_id: str) -> None:
        try:
            self._statement(select(func.pg_notify(NOTIFY_CHANNEL, job_id)))
        except Exception:  # listeners also poll: a lost notification only costs latency
            log.debug("could not notify a change of job %s", job_id, exc_info=True)


def _async_commit_sessions(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=_engine(url, True, True), expire_on_commit=False)
