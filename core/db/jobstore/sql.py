"""The portable job store: every operation through SQLAlchemy's ORM and :mod:`core.db.crud`, in a transaction.

It runs on any database SQLAlchemy speaks. :class:`~core.db.jobstore.sqlite.SQLiteJobStore` is this
store with SQLite's report upsert; :class:`~core.db.jobstore.postgres.PostgresJobStore` replaces the
hot paths (submit, claim, report + end state, notify) with single statements and falls back to this
store for everything else.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.db import crud
from core.db.jobstore.base import Claim, JobStore, NewArtifact, NewJob, detached
from core.db.models import Job, JobStatus
from core.db.session import get_engine, session_scope

_KEY_CHUNK = 500  # idempotency keys per IN (...) lookup


class SqlJobStore(JobStore):
    """:class:`~core.db.jobstore.base.JobStore` through the ORM; ``url=None`` is the configured database."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url or 'settings.database_url'})"

    # --- submission -----------------------------------------------------------------------------
    def create(self, job: NewJob) -> tuple[Job, bool]:
        with session_scope(self.url) as s:
            row, created = crud.create_job(
                s,
                method=job.method,
                params=job.params,
                queue=job.queue,
                owner=job.owner,
                idempotency_key=job.idempotency_key,
            )
            s.flush()
            s.expunge(row)
        return row, created

    def create_many(self, jobs: Sequence[NewJob]) -> list[tuple[Job, bool]]:
        try:
            return self._create_in_one_transaction(jobs)
        except IntegrityError:  # a concurrent request took one of the keys between our read and our insert
            return [self.create(job) for job in jobs]

    def _create_in_one_transaction(self, jobs: Sequence[NewJob]) -> list[tuple[Job, bool]]:
        out: list[tuple[Job, bool]] = []
        with session_scope(self.url) as s:
            existing: dict[tuple[str, str], Job] = {}
            for owner in sorted({j.owner for j in jobs if j.idempotency_key}):
                keys = sorted({j.idempotency_key for j in jobs if j.idempotency_key and j.owner == owner})
                for chunk in range(0, len(keys), _KEY_CHUNK):
                    for row in s.scalars(
                        select(Job).where(Job.owner == owner, Job.idempotency_key.in_(keys[chunk : chunk + _KEY_CHUNK]))
                    ):
                        existing[(owner, row.idempotency_key)] = row
            new_rows: list[Job] = []
            for job in jobs:
                key = (job.owner, job.idempotency_key) if job.idempotency_key else None
                if key is not None and key in existing:
                    out.append((existing[key], False))
                    continue
                row = Job(
                    method=job.method,
                    params=job.params,
                    queue=job.queue,
                    owner=job.owner,
                    idempotency_key=job.idempotency_key,
                )
                out.append((row, True))
                new_rows.append(row)
                if key is not None:
                    existing[key] = row
            s.add_all(new_rows)
            s.flush()
            detached(s, [row for row, _ in out])
        return out

    def fail(self, errors: Mapping[str, str | None], *, message: str = "") -> int:
        with session_scope(self.url) as s:
            return sum(
                crud.finish_job(s, job_id=job_id, status=JobStatus.failed, message=message, error=error)
                for job_id, error in errors.items()
            )

    # --- execution ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def state_transaction(self) -> Iterator[Session]:
        with session_scope(self.url) as s:
            yield s

    def claim(self, job_id: str, *, worker: str, stale_after_s: float) -> Claim:
        with self.state_transaction() as s:
            fast = crud.claim_queued_job(s, job_id=job_id, worker=worker)
            if fast is not None:  # the common case: a queued job, not cancelled
                claim = Claim("claimed", *fast)
            else:  # a redelivery, a stale takeover, a cancellation: crud's full path
                status = crud.claim_job(s, job_id=job_id, worker=worker, stale_after_s=stale_after_s)
                job = crud.get_job(s, job_id=job_id)
                claim = Claim(status, job.method if job else "", dict(job.params) if job else {})
        if claim.status in ("claimed", "finished"):
            self.notify(job_id)
        return claim

    def heartbeat(self, job_id: str) -> bool:
        with self.state_transaction() as s:
            return crud.touch_job(s, job_id=job_id)

    def progress(self, job_id: str, *, fraction: float, message: str) -> bool:
        with self.state_transaction() as s:
            cancel = crud.touch_job(s, job_id=job_id, progress=fraction, message=message)
        self.notify(job_id)
        return cancel

    def finish(self, job_id: str, *, status: JobStatus, message: str = "", error: str | None = None) -> bool:
        with self.state_transaction() as s:
            ended = crud.finish_job(s, job_id=job_id, status=status, message=message, error=error)
        self.notify(job_id)
        return ended

    def release(self, job_id: str) -> None:
        with self.state_transaction() as s:
            crud.clear_heartbeat(s, job_id=job_id)

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
        with self.state_transaction() if finish is not None else session_scope(self.url) as s:
            for a in artifacts:
                crud.add_artifact(
                    s,
                    job_id=job_id,
                    name=a.name,
                    kind=a.kind,
                    mime=a.mime,
                    sha256=a.sha256,
                    size=a.size,
                    artifact_id=a.id,
                )
            report_id = self._upsert_report(s, job_id, title=title, summary=summary, body=body)
            if finish is not None and job_id is not None:
                crud.finish_job(s, job_id=job_id, status=finish[0], message=finish[1])
        if finish is not None and job_id is not None:
            self.notify(job_id)
        return report_id

    def _upsert_report(self, s: Session, job_id: str | None, *, title: str, summary: str, body: dict[str, Any]) -> str:
        """Insert the report, replacing the job's earlier one (portable: delete, then insert)."""
        return crud.save_report(s, job_id=job_id, title=title, summary=summary, body=body).id

    def notify(self, job_id: str) -> None:
        """No channel on a portable database: listeners poll."""

    # --- the reaper -----------------------------------------------------------------------------
    def stale_jobs(
        self, *, running_before: dt.datetime, queued_before: dt.datetime, limit: int
    ) -> list[tuple[str, str]]:
        with session_scope(self.url) as s:
            return crud.stale_job_ids(s, running_before=running_before, queued_before=queued_before, limit=limit)

    def requeue(self, job_id: str, *, running_before: dt.datetime, queued_before: dt.datetime) -> Job | None:
        with session_scope(self.url) as s:
            won = crud.requeue_stale_job(s, job_id=job_id, running_before=running_before, queued_before=queued_before)
            job = crud.get_job(s, job_id=job_id) if won else None
            if job is not None:
                s.expunge(job)
        return job

    # --- reads ----------------------------------------------------------------------------------
    def get(self, job_id: str) -> Job | None:
        with session_scope(self.url) as s:
            job = crud.get_job(s, job_id=job_id)
            if job is not None:
                s.expunge(job)
        return job

    def columns(self, job_ids: Sequence[str], names: Sequence[str]) -> list[dict[str, Any]]:
        cols = [Job.__table__.c[n] for n in names if n in Job.__table__.c]
        with get_engine(self.url).connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            return [dict(r) for r in c.execute(select(*cols).where(Job.id.in_(list(job_ids)))).mappings()]

    def count(self, job_ids: Sequence[str], statuses: Sequence[str]) -> int:
        with session_scope(self.url) as s:
            return s.scalar(select(func.count()).where(Job.id.in_(list(job_ids)), Job.status.in_(list(statuses))))
