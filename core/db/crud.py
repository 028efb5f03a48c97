"""Keyword-only data access for jobs, reports, artifacts and API keys."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.db.models import ApiKey, ArtifactRow, Job, JobStatus, ReportRow, utcnow

KEY_PREFIX = "pw_"


# --- API keys -----------------------------------------------------------------
def hash_key(key: str) -> str:
    """SHA-256 of an API key. Keys are 256-bit random strings, so a fast hash is safe."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_api_key(session: Session, *, name: str, scopes: str = "") -> tuple[ApiKey, str]:
    """Create a key; the plaintext is returned once and never stored. ``scopes="admin"`` sees every owner."""
    plaintext = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(name=name, prefix=plaintext[:10], key_hash=hash_key(plaintext), scopes=scopes)
    session.add(row)
    session.flush()
    return row, plaintext


def verify_api_key(session: Session, *, key: str) -> ApiKey | None:
    if not key or len(key) > 200:
        return None
    row = session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_key(key)))
    if row is None or row.revoked_at is not None:
        return None
    # constant-time compare of the digests (the lookup above already matched)
    return row if secrets.compare_digest(row.key_hash, hash_key(key)) else None


def revoke_api_key(session: Session, *, key_id: str) -> bool:
    row = session.get(ApiKey, key_id)
    if row is None:
        return False
    row.revoked_at = utcnow()
    return True


# --- jobs ---------------------------------------------------------------------
def create_job(
    session: Session,
    *,
    method: str,
    params: dict[str, Any],
    queue: str,
    owner: str = "local",
    idempotency_key: str | None = None,
) -> tuple[Job, bool]:
    """Insert a queued job; with an idempotency key already used by ``owner``, return that job.

    Returns ``(job, created)``.
    """
    if idempotency_key:
        existing = get_job_by_idempotency(session, owner=owner, idempotency_key=idempotency_key)
        if existing is not None:
            return existing, False
    job = Job(method=method, params=params, queue=queue, owner=owner, idempotency_key=idempotency_key)
    session.add(job)
    try:
        session.flush()
    except IntegrityError:  # a concurrent request with the same key won the race
        session.rollback()
        existing = get_job_by_idempotency(session, owner=owner, idempotency_key=idempotency_key or "")
        if existing is None:
            raise
        return existing, False
    return job, True


def get_job_by_idempotency(session: Session, *, owner: str, idempotency_key: str) -> Job | None:
    return session.scalar(select(Job).where(Job.owner == owner, Job.idempotency_key == idempotency_key))


def get_job(session: Session, *, job_id: str) -> Job | None:
    return session.get(Job, job_id)


def list_jobs(
    session: Session,
    *,
    owner: str | None = None,
    method: str | None = None,
    status: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Job]:
    q = select(Job).order_by(Job.created_at.desc()).limit(limit).offset(offset)
    if owner is not None:
        q = q.where(Job.owner == owner)
    if method:
        q = q.where(Job.method == method)
    if status:
        q = q.where(Job.status == status)
    return list(session.scalars(q))


def claim_job(session: Session, *, job_id: str, worker: str, stale_after_s: float) -> str:
    """Try to move a job to ``running`` for ``worker``.

    Returns ``"claimed"``, ``"finished"`` (nothing to do: the job already ended),
    ``"busy"`` (another live worker holds it) or ``"missing"``. A running job whose
    heartbeat is older than ``stale_after_s`` is taken over: its worker died.
    """
    job = session.get(Job, job_id, with_for_update=True)
    if job is None:
        return "missing"
    status = JobStatus(job.status)
    if status.finished:
        return "finished"
    now = utcnow()
    if job.cancel_requested:
        job.status, job.finished_at, job.message = JobStatus.cancelled.value, now, "cancelled before start"
        return "finished"
    if status is JobStatus.running and job.heartbeat_at is not None:
        age = (now - _aware(job.heartbeat_at)).total_seconds()
        if age < stale_after_s:
            return "busy"
    job.status = JobStatus.running.value
    job.attempts += 1
    job.worker = worker
    job.started_at = job.started_at or now
    job.heartbeat_at = now
    job.error = None
    return "claimed"


def claim_queued_job(session: Session, *, job_id: str, worker: str) -> tuple[str, dict[str, Any]] | None:
    """The common claim in one ``UPDATE … RETURNING``: a queued, not-cancelled job moves to ``running`` for
    ``worker``; returns its ``(method, params)``, or ``None`` when the job is anything else (ended, running,
    cancelled before start, missing: :func:`claim_job` decides those)."""
    now = utcnow()
    row = session.execute(
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
    ).first()
    return None if row is None else (row[0], dict(row[1] or {}))


def clear_heartbeat(session: Session, *, job_id: str) -> None:
    """Forget a job's heartbeat: a running job then counts as stale at once (its retry, or another worker,
    takes it over)."""
    session.execute(
        update(Job).where(Job.id == job_id).values(heartbeat_at=None).execution_options(synchronize_session=False)
    )


def stale_job_ids(
    session: Session, *, running_before: dt.datetime, queued_before: dt.datetime, limit: int = 500
) -> list[tuple[str, str]]:
    """``(id, status)`` of running jobs whose heartbeat is older than ``running_before`` (or missing) and of
    queued jobs last sent to the broker before ``queued_before``: the reaper's candidates."""
    from sqlalchemy import and_, or_

    q = (
        select(Job.id, Job.status)
        .where(
            or_(
                and_(
                    Job.status == JobStatus.running.value,
                    or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < running_before),
                ),
                and_(
                    Job.status == JobStatus.queued.value,
                    func.coalesce(Job.heartbeat_at, Job.created_at) < queued_before,
                ),
            )
        )
        .order_by(Job.created_at)
        .limit(limit)
    )
    return [(r[0], r[1]) for r in session.execute(q)]


def requeue_stale_job(
    session: Session, *, job_id: str, running_before: dt.datetime, queued_before: dt.datetime
) -> bool:
    """Atomically move a stale running job back to ``queued`` (or re-stamp a stale queued one).

    A conditional UPDATE: when two reapers race, exactly one gets ``True`` and re-sends the message.
    ``heartbeat_at`` of a queued job records when it was last sent to the broker.
    """
    from sqlalchemy import and_, or_

    now = utcnow()
    res = session.execute(
        update(Job)
        .where(
            Job.id == job_id,
            or_(
                and_(
                    Job.status == JobStatus.running.value,
                    or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < running_before),
                ),
                and_(
                    Job.status == JobStatus.queued.value,
                    func.coalesce(Job.heartbeat_at, Job.created_at) < queued_before,
                ),
            ),
        )
        .values(
            status=JobStatus.queued.value,
            worker=None,
            heartbeat_at=now,
            message="requeued by the reaper (worker lost or message lost)",
        )
        .execution_options(synchronize_session=False)
    )
    return res.rowcount == 1


def job_owners_by_param(session: Session, *, method: str, param: str, values: list[str]) -> dict[str, str]:
    """For each value of the string param ``param`` among ``values``: the owner of the earliest ``method`` job
    whose params name it (e.g. which key submitted the first ``pae.train`` job of a ``run_id``)."""
    if not values:
        return {}
    value = Job.params[param].as_string()
    rows = session.execute(
        select(value, Job.owner).where(Job.method == method, value.in_(values)).order_by(Job.created_at)
    ).all()
    owners: dict[str, str] = {}
    for v, owner in rows:
        owners.setdefault(v, owner)
    return owners


def touch_job(session: Session, *, job_id: str, progress: float | None = None, message: str | None = None) -> bool:
    """Refresh the heartbeat (and progress); returns whether cancellation was requested."""
    values: dict[str, Any] = {"heartbeat_at": utcnow()}
    if progress is not None:
        values["progress"] = float(min(max(progress, 0.0), 1.0))
    if message is not None:
        values["message"] = message[:2000]
    session.execute(update(Job).where(Job.id == job_id, Job.status == JobStatus.running.value).values(**values))
    return bool(session.scalar(select(Job.cancel_requested).where(Job.id == job_id)))


def finish_job(
    session: Session, *, job_id: str, status: JobStatus, message: str = "", error: str | None = None
) -> bool:
    """Move a running job to a final state exactly once. Returns False if it had already ended."""
    res = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.status.in_([JobStatus.running.value, JobStatus.queued.value]))
        .values(
            status=status.value,
            finished_at=utcnow(),
            message=message[:2000],
            error=error,
            progress=1.0 if status is JobStatus.succeeded else Job.progress,
        )
    )
    return res.rowcount == 1


def request_cancel(session: Session, *, job_id: str) -> Job | None:
    """Cancel a queued job at once; ask a running one to stop at its next progress report."""
    job = session.get(Job, job_id)
    if job is None:
        return None
    if job.status == JobStatus.queued.value:
        job.status, job.finished_at, job.message = JobStatus.cancelled.value, utcnow(), "cancelled"
    elif job.status == JobStatus.running.value:
        job.cancel_requested = True
    return job


# --- reports and artifacts --------------------------------------------------------
def save_report(session: Session, *, job_id: str | None, title: str, summary: str, body: dict[str, Any]) -> ReportRow:
    if job_id is not None:
        old = session.scalar(select(ReportRow).where(ReportRow.job_id == job_id))
        if old is not None:
            session.delete(old)
            session.flush()
    row = ReportRow(job_id=job_id, title=title[:500], summary=summary, body=body)
    session.add(row)
    session.flush()
    return row


def get_report_for_job(session: Session, *, job_id: str) -> ReportRow | None:
    return session.scalar(select(ReportRow).where(ReportRow.job_id == job_id))


def add_artifact(
    session: Session,
    *,
    job_id: str | None,
    name: str,
    kind: str,
    mime: str,
    sha256: str,
    size: int,
    artifact_id: str | None = None,
) -> ArtifactRow:
    """Record a file of the artifact store as an artifact of ``job_id`` (``artifact_id``: a chosen id)."""
    row = ArtifactRow(job_id=job_id, name=name[:300], kind=kind, mime=mime, sha256=sha256, size=size)
    if artifact_id is not None:
        row.id = artifact_id
    session.add(row)
    session.flush()
    return row


def get_artifact(session: Session, *, artifact_id: str) -> ArtifactRow | None:
    return session.get(ArtifactRow, artifact_id)


def _aware(t: dt.datetime) -> dt.datetime:
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)
