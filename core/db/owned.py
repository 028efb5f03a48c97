"""Queries behind :mod:`core.ownership`: who owns an upload, an artifact or a recorded server object."""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.db.models import ArtifactRow, Job, OwnedObject


def record(session: Session, *, kind: str, ref: str, owner: str) -> None:
    """Record that ``owner`` stored ``ref`` (idempotent: a second call, or a concurrent one, adds nothing)."""
    if recorded(session, kind=kind, ref=ref, owner=owner):
        return
    try:
        with session.begin_nested():
            session.add(OwnedObject(kind=kind, ref=ref, owner=owner))
    except IntegrityError:  # the same row, recorded by a concurrent request
        pass


def recorded(session: Session, *, kind: str, ref: str, owner: str) -> bool:
    stmt = select(OwnedObject.id).where(OwnedObject.kind == kind, OwnedObject.ref == ref, OwnedObject.owner == owner)
    return session.scalar(stmt.limit(1)) is not None


def artifact_owner(session: Session, *, artifact_id: str) -> str | None:
    """The owner of the job that produced the artifact (``None``: no such artifact, or one of no job)."""
    stmt = select(Job.owner).join(ArtifactRow, ArtifactRow.job_id == Job.id).where(ArtifactRow.id == artifact_id)
    return session.scalar(stmt)


def owns_digest(session: Session, *, sha256: str, owner: str) -> bool:
    """Whether ``owner`` uploaded bytes with this SHA-256, or one of its jobs produced an artifact of them."""
    if recorded(session, kind="upload", ref=sha256, owner=owner):
        return True
    produced = exists().where(ArtifactRow.sha256 == sha256, ArtifactRow.job_id == Job.id, Job.owner == owner)
    return bool(session.scalar(select(produced)))


def job_owner(session: Session, *, job_id: str) -> str | None:
    return session.scalar(select(Job.owner).where(Job.id == job_id))
