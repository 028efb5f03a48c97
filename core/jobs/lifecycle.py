"""The job lifecycle: submit (queued) → run (running) → succeeded / failed / cancelled.

Job state lives in the application database, never in the broker's result
backend. :func:`execute_job` is idempotent: a message delivered twice (``acks_late``
after a worker died) runs a job at most once to completion, because a job that
already ended is skipped and a running one whose heartbeat is fresh is left to its
live worker.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, bindparam, create_engine, func, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from core.artifacts import get_artifact_store
from core.config import get_settings
from core.db import crud
from core.db.models import Job, JobStatus, ReportRow, new_id, utcnow
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
    fields = {
        "method": spec.name,
        "params": validated.model_dump(mode="json"),
        "queue": queue or spec.queue,
        "owner": owner,
        "idempotency_key": idempotency_key,
    }
    job = _pg_insert_job(fields) if _on_postgres() else None
    created = job is not None
    if job is None:  # SQLite, or an idempotency key used before: the ORM path finds the earlier job
        with session_scope() as s:
            job, created = crud.create_job(s, **fields)
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


@functools.cache
def _pg_insert_stmt() -> Any:
    """``INSERT INTO jobs … ON CONFLICT (owner, idempotency_key) DO NOTHING RETURNING id``, built once
    with bound parameters so SQLAlchemy compiles it once (a NULL key never conflicts)."""
    from sqlalchemy.dialects.postgresql import insert

    return insert(Job.__table__).on_conflict_do_nothing(constraint="uq_jobs_owner_idem").returning(Job.__table__.c.id)


def _pg_insert_job(fields: dict[str, Any]) -> Job | None:
    """PostgreSQL: record a queued job in ONE round trip; ``None`` when its idempotency key is taken.

    A single ``INSERT … ON CONFLICT DO NOTHING RETURNING id`` in autocommit mode on the
    durable engine (the commit waits for the WAL flush: an acknowledged submission survives a
    database crash), instead of the ORM's pre-ping, BEGIN, INSERT and COMMIT. The job object
    returned is built from the same values (every column has them), detached from any session.
    """
    values = {
        **fields,
        "id": new_id(),
        "status": JobStatus.queued.value,
        "progress": 0.0,
        "message": "",
        "attempts": 0,
        "cancel_requested": False,
        "created_at": utcnow(),
    }
    stmt = _pg_insert_stmt()
    engine = _pg_engine(str(get_settings().database_url), False, False)
    for attempt in (0, 1):
        try:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                row = c.execute(stmt, values).first()
            break
        except IntegrityError:
            if attempt:  # our own first attempt was committed before its connection dropped
                return Job(**values)
            raise
        except DBAPIError as exc:
            if attempt or not exc.connection_invalidated:
                raise
    return Job(**values) if row is not None else None


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
    from sqlalchemy import select

    results = [BatchResult() for _ in items]
    valid: list[tuple[int, Any, dict[str, Any]]] = []
    for i, item in enumerate(items):
        try:
            spec = get_method(item.method)
            valid.append((i, spec, spec.validate(item.params).model_dump(mode="json")))
        except (KeyError, ValueError) as exc:  # UnknownMethod, InvalidParams
            results[i].error = exc
    keys = sorted({items[i].idempotency_key for i, _, _ in valid if items[i].idempotency_key})
    try:
        with session_scope() as s:
            existing: dict[str, Job] = {}
            for chunk in range(0, len(keys), 500):
                for job in s.scalars(
                    select(Job).where(Job.owner == owner, Job.idempotency_key.in_(keys[chunk : chunk + 500]))
                ):
                    existing[job.idempotency_key] = job
            new_rows: list[Job] = []
            for i, spec, params in valid:
                key = items[i].idempotency_key
                if key and key in existing:
                    results[i].job = existing[key]
                    continue
                job = Job(method=spec.name, params=params, queue=spec.queue, owner=owner, idempotency_key=key)
                results[i].job, results[i].created = job, True
                new_rows.append(job)
                if key:
                    existing[key] = job
            s.add_all(new_rows)
            s.flush()
            for job in {id(r.job): r.job for r in results if r.job is not None}.values():
                s.expunge(job)
    except IntegrityError:
        # a concurrent request took one of the keys between our read and our insert: one by one
        for i, _, _ in valid:
            try:
                job, created = submit_job(
                    items[i].method, items[i].params, owner=owner, idempotency_key=items[i].idempotency_key
                )
                results[i] = BatchResult(job=job, created=created)
            except (KeyError, ValueError) as exc:
                results[i] = BatchResult(error=exc)
    if enqueue is not None:
        refused: list[tuple[BatchResult, Exception]] = []
        for r in results:
            if r.created and r.job is not None:
                try:
                    enqueue(r.job)
                except Exception as exc:
                    refused.append((r, exc))
        if refused:
            with session_scope() as s:
                for r, exc in refused:
                    crud.finish_job(
                        s,
                        job_id=r.job.id,
                        status=JobStatus.failed,
                        message="could not enqueue",
                        error=f"could not enqueue: {type(exc).__name__}: {exc}",
                    )
                    r.error = EnqueueError(f"the job queue is unavailable: {type(exc).__name__}: {exc}")
    return results


@dataclass
class Outcome:
    """What :func:`execute_job` did with one delivery."""

    status: str  # "succeeded", "failed", "cancelled", "finished" (already ended), "busy", "missing"
    error: str | None = None
    retry: bool = False


@functools.lru_cache(maxsize=8)
def _pg_engine(url: str, async_commit: bool, pre_ping: bool) -> Engine:
    """PostgreSQL connections for the worker's state changes, opened with ``synchronous_commit=off``
    when ``async_commit`` (a connection option: no extra round trip per transaction)."""
    args = {"options": "-c synchronous_commit=off"} if async_commit else {}
    return create_engine(url, pool_pre_ping=pre_ping, connect_args=args)


def _async_commit_sessions(url: str) -> sessionmaker[Session]:
    return sessionmaker(bind=_pg_engine(url, True, True), expire_on_commit=False)


def _on_postgres() -> bool:
    return str(get_settings().database_url).startswith("postgresql")


def _pg_statement(stmt: Any, params: dict[str, Any] | None = None) -> Any:
    """Run ONE statement on PostgreSQL in autocommit mode and return its first row.

    One round trip: no BEGIN, no COMMIT, no pre-ping (a connection the server dropped is
    retried once on a fresh one). A single statement is atomic by itself.
    """
    settings = get_settings()
    engine = _pg_engine(str(settings.database_url), settings.job_async_commit, False)
    for attempt in (0, 1):
        try:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
                return c.execute(stmt, params).first() if params is not None else c.execute(stmt).first()
        except DBAPIError as exc:
            if attempt or not exc.connection_invalidated:
                raise
    return None  # pragma: no cover - the loop returns or raises


NOTIFY_CHANNEL = "paperworks_jobs"
"""PostgreSQL channel that carries a job id whenever its state changes (the API's wait and SSE listen to it)."""


def notify_job_changed(job_id: str) -> None:
    """Tell listeners (the API's long-polls and event streams) that ``job_id`` changed; PostgreSQL only."""
    if not _on_postgres():
        return
    try:
        _pg_statement(select(func.pg_notify(NOTIFY_CHANNEL, job_id)))
    except Exception:  # listeners also poll: a lost notification only costs latency
        log.debug("could not notify a change of job %s", job_id, exc_info=True)


def _claim_stmt(job_id: str, worker: str) -> Any:
    """Move a queued, not-cancelled job to running; ``RETURNING method, params``."""
    now = utcnow()
    return (
        update(Job)
        .where(Job.id == job_id, Job.status == JobStatus.queued.value, Job.cancel_requested.is_(False))
        .values(
            status=JobStatus.running.value,
            attempts=Job.attempts + 1,
            worker=worker,
            started_at=func.coalesce(Job.started_at, now),
            heartbeat_at=now,
            error=None,
        )
        .returning(Job.method, Job.params)
        .execution_options(synchronize_session=False)
    )


@functools.cache
def _pg_claim_stmt() -> Any:
    """PostgreSQL: :func:`_claim_stmt` that also notifies the job's listeners, in the same statement.

    Built once on the table with bound parameters (``p_id``, ``p_worker``, ``p_now``), so each claim
    only binds values: building an ORM statement per job cost more CPU than its round trip.
    """
    jobs = Job.__table__
    now = bindparam("p_now", type_=jobs.c.started_at.type)
    note = select(func.pg_notify(NOTIFY_CHANNEL, bindparam("p_id")).label("n_")).cte("notified")
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
def _pg_finish_stmt(status: JobStatus) -> Any:
    """PostgreSQL: upsert the report and end the job in ONE statement (a data-modifying CTE) that also
    notifies the job's listeners; built once per end state, bound per job (``p_id``, ``p_report_id``,
    ``p_title``, ``p_summary``, ``p_body``, ``p_now``, ``p_message``)."""
    from sqlalchemy.dialects.postgresql import insert

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
    note = select(func.pg_notify(NOTIFY_CHANNEL, bindparam("p_id")).label("n_")).cte("notified")
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


@contextlib.contextmanager
def state_transaction() -> Iterator[Session]:
    """A transaction for a worker's own state changes (claim, progress, heartbeat, report + end state).

    On PostgreSQL with ``settings.job_async_commit`` it commits without waiting for the WAL
    flush (``synchronous_commit=off`` on its own connections): an fsync per state change was
    most of a trivial job's cost. What a database crash could lose is recoverable: a lost claim
    leaves the job queued, a lost end state leaves it running with a stale heartbeat, and the
    reaper sends either again. Submissions (:func:`submit_job`, :func:`submit_jobs`) always
    wait for the flush.
    """
    settings = get_settings()
    url = str(settings.database_url)
    if not (settings.job_async_commit and url.startswith("postgresql")):
        with session_scope() as s:
            yield s
        return
    s = _async_commit_sessions(url)()
    try:
        yield s
        s.commit()
    except BaseException:
        s.rollback()
        raise
    finally:
        s.close()


def _claim(s: Session, job_id: str, worker: str, stale_after_s: float) -> tuple[str, str, dict[str, Any]]:
    """``(claim, method, params)``: one ``UPDATE … RETURNING`` for the common case (a queued job, not
    cancelled); anything else (a redelivery, a stale takeover, a cancellation) takes crud's full path."""
    row = s.execute(_claim_stmt(job_id, worker)).first()
    if row is not None:
        return "claimed", row[0], dict(row[1] or {})
    claim = crud.claim_job(s, job_id=job_id, worker=worker, stale_after_s=stale_after_s)
    job = crud.get_job(s, job_id=job_id)
    return claim, (job.method if job else ""), (dict(job.params) if job else {})


def _save_report(s: Session, job_id: str | None, report: Report) -> str:
    """Insert the job's report, replacing an earlier one, in one statement (``INSERT … ON CONFLICT``)."""
    body = report.model_dump(mode="json")
    dialect = s.get_bind().dialect.name
    if job_id is None or dialect not in ("postgresql", "sqlite"):
        return crud.save_report(s, job_id=job_id, title=report.title, summary=report.summary, body=body).id
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    values = {"title": report.title[:500], "summary": report.summary, "body": body, "created_at": utcnow()}
    stmt = insert(ReportRow).values(id=new_id(), job_id=job_id, **values)
    stmt = stmt.on_conflict_do_update(index_elements=[ReportRow.job_id], set_=values).returning(ReportRow.id)
    return s.execute(stmt).scalar_one()


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
                    with state_transaction() as s:
                        crud.touch_job(s, job_id=job_id)
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
        with state_transaction() as s:
            cancel = crud.touch_job(s, job_id=job_id, progress=fraction, message=message)
        notify_job_changed(job_id)
        return cancel

    return sink


def persist_report(job_id: str | None, report: Report, *, finish: tuple[JobStatus, str] | None = None) -> str:
    """Store the report's pending files as artifacts and the report itself; returns the report id.

    With ``finish=(status, message)`` the job's end state is written in the same transaction
    (one commit for report, artifacts and status).
    """
    store = get_artifact_store()
    stored_files = []
    for name, data in report.pending_files().items():  # bytes first, outside the transaction
        ref = report.artifact(name)
        stored_files.append((name, ref, store.put_bytes(data, name=name, mime=ref.mime if ref else None)))
    if finish is not None and job_id is not None and not stored_files and _on_postgres():
        status, message = finish
        params = {
            "p_id": job_id,
            "p_report_id": new_id(),
            "p_title": report.title[:500],
            "p_summary": report.summary,
            "p_body": report.model_dump(mode="json"),
            "p_now": utcnow(),
            "p_message": message[:2000],
        }
        row = _pg_statement(_pg_finish_stmt(status), params)
        if row is not None:
            return row[0]
    with state_transaction() if finish is not None else session_scope() as s:
        for name, ref, stored in stored_files:
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
        report_id = _save_report(s, job_id, report)
        if finish is not None and job_id is not None:
            crud.finish_job(s, job_id=job_id, status=finish[0], message=finish[1])
    if finish is not None and job_id is not None:
        notify_job_changed(job_id)
    return report_id


def execute_job(
    job_id: str, *, worker: str | None = None, extra_sink: Callable[[float, str], None] | None = None
) -> Outcome:
    """Run a queued job to its end, writing every state change to the database."""
    settings = get_settings()
    worker = worker or worker_name()
    row = (
        _pg_statement(_pg_claim_stmt(), {"p_id": job_id, "p_worker": worker, "p_now": utcnow()})
        if _on_postgres()
        else None
    )
    if row is not None:  # the common case in one round trip
        claim, method, params = "claimed", row[0], dict(row[1] or {})
    else:
        with state_transaction() as s:
            claim, method, params = _claim(s, job_id, worker, settings.job_stale_after_s)
        if claim in ("claimed", "finished"):
            notify_job_changed(job_id)
    if claim != "claimed":
        log.info("job %s not run here: %s", job_id, claim)
        return Outcome(status=claim, retry=claim == "busy")

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
        with state_transaction() as s:
            crud.finish_job(s, job_id=job_id, status=JobStatus.cancelled, message="cancelled")
        notify_job_changed(job_id)
        return Outcome(status="cancelled")
    except TransientError as exc:
        # leave the job running-but-stale so the retry (or another worker) takes it over
        with state_transaction() as s:
            s.get(Job, job_id).heartbeat_at = None
        return Outcome(status="failed", error=str(exc), retry=True)
    except Exception as exc:
        tb = traceback.format_exc(limit=20)
        log.error("job %s (%s) failed: %s", job_id, method, exc)
        with state_transaction() as s:
            crud.finish_job(
                s, job_id=job_id, status=JobStatus.failed, message=f"{type(exc).__name__}: {exc}"[:500], error=tb
            )
        notify_job_changed(job_id)
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


# --- the reaper -------------------------------------------------------------------
def reap_stale(
    *,
    enqueue: Enqueue | None = None,
    stale_after_s: float | None = None,
    requeue_queued_after_s: float | None = None,
    limit: int = 500,
) -> list[str]:
    """Re-enqueue jobs whose worker died (or whose broker message was lost); returns their ids.

    * a ``running`` job whose heartbeat is older than ``stale_after_s`` (default
      ``settings.job_stale_after_s``) goes back to ``queued`` and is sent again;
    * a ``queued`` job last sent more than ``requeue_queued_after_s`` ago
      (``settings.job_requeue_queued_after_s``) is sent again.

    Idempotent and safe to run from every worker (and from ``paperworks up``) at once: each
    job is moved by one conditional UPDATE, so one reaper wins and sends one message. A
    message the broker redelivers later finds the job already claimed or ended
    (:func:`execute_job` runs a job to completion at most once). ``enqueue`` defaults to the
    sender the worker package registered (:func:`core.jobs.dispatch.get_sender`).
    """
    import datetime as dt

    from core.db.models import utcnow

    settings = get_settings()
    stale = settings.job_stale_after_s if stale_after_s is None else stale_after_s
    queued_after = settings.job_requeue_queued_after_s if requeue_queued_after_s is None else requeue_queued_after_s
    if enqueue is None:
        from core.jobs.dispatch import get_sender

        enqueue = get_sender()
    now = utcnow()
    running_before = now - dt.timedelta(seconds=stale)
    queued_before = now - dt.timedelta(seconds=queued_after)
    with session_scope() as s:
        candidates = crud.stale_job_ids(s, running_before=running_before, queued_before=queued_before, limit=limit)
    requeued: list[str] = []
    for job_id, was in candidates:
        with session_scope() as s:
            won = crud.requeue_stale_job(s, job_id=job_id, running_before=running_before, queued_before=queued_before)
            job = crud.get_job(s, job_id=job_id) if won else None
            if job is not None:
                s.expunge(job)
        if job is None:
            continue  # another reaper took it, or it moved on
        try:
            enqueue(job)
        except Exception:
            # the row says queued with a fresh stamp; the next sweep after requeue_queued_after_s retries
            log.warning("reaper could not re-send job %s", job_id, exc_info=True)
            continue
        log.warning("reaper re-enqueued job %s (was %s)", job_id, was)
        requeued.append(job_id)
    return requeued


class Reaper(threading.Thread):
    """A daemon thread calling :func:`reap_stale` every ``interval_s`` (first sweep at once)."""

    def __init__(self, *, enqueue: Enqueue | None = None, interval_s: float | None = None) -> None:
        super().__init__(daemon=True, name="paperworks-reaper")
        self.enqueue = enqueue
        self.interval_s = interval_s or get_settings().job_reap_interval_s
        self.stop = threading.Event()

    def run(self) -> None:
        while True:
            try:
                reap_stale(enqueue=self.enqueue)
            except Exception:  # a DB hiccup: try again next sweep
                log.warning("reaper sweep failed", exc_info=True)
            if self.stop.wait(self.interval_s):
                return
