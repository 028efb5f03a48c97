"""Typed SQLAlchemy 2.0 models of the application database.

The schema only ever changes through Alembic revisions in ``migrations/``;
these classes mirror it. Method-specific tables (agent trajectories, evidence
records) live in their own modules of this package and share :class:`Base`.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def new_id() -> str:
    return uuid.uuid4().hex


class UTCDateTime(TypeDecorator):
    """A timezone-aware timestamp on every backend (SQLite forgets the zone; we store UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):  # noqa: ARG002 - SQLAlchemy signature
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value

    def process_result_value(self, value, dialect):  # noqa: ARG002
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class JobStatus(str, enum.Enum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled)


class ApiKey(Base):
    """An API key; only its SHA-256 is stored, with a short public prefix for lookup."""

    __tablename__ = "api_keys"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(16), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # space-separated scopes; "admin" sees every owner's jobs, reports and artifacts
    scopes: Mapped[str] = mapped_column(String(200), default="", server_default="")


class Job(Base):
    """One run of a registered method, from submission to its report."""

    __tablename__ = "jobs"
    __table_args__ = (UniqueConstraint("owner", "idempotency_key", name="uq_jobs_owner_idem"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    method: Mapped[str] = mapped_column(String(100), index=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    queue: Mapped[str] = mapped_column(String(20), default="cpu")
    status: Mapped[str] = mapped_column(String(20), default=JobStatus.queued.value, index=True)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # the id of the API key that submitted the job ("local" for the CLI's in-process runs); only that key
    # (or an admin-scoped one) sees the job, its report and its artifacts
    owner: Mapped[str] = mapped_column(String(32), default="local")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class ReportRow(Base):
    """The report a finished job produced (the :class:`core.jobs.Report` as JSON)."""

    __tablename__ = "reports"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    job_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("jobs.id", ondelete="CASCADE"), unique=True, nullable=True
    )
    title: Mapped[str] = mapped_column(String(500))
    summary: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ArtifactRow(Base):
    """A file a job produced; the bytes live in the artifact store under ``sha256``."""

    __tablename__ = "artifacts"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    job_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=True, index=True
    )
    name: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(30), default="file")
    mime: Mapped[str] = mapped_column(String(100), default="application/octet-stream")
    sha256: Mapped[str] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class OwnedObject(Base):
    """A stored object an API key may name in job params: an upload's digest, a server file, a checkpoint.

    Job params can name things stored on the server (``image_sha256``, DEFAME's image paths, any4's
    checkpoint ids, PAE's ``sft_adapter``); a key may name only its own (:mod:`core.ownership`). Artifacts
    a job produced belong to the job's owner already; this table records the rest, one row per key: the
    same bytes uploaded by two keys belong to both.
    """

    __tablename__ = "owned_objects"
    __table_args__ = (UniqueConstraint("kind", "ref", "owner", name="uq_owned_objects_kind_ref_owner"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(40))
    ref: Mapped[str] = mapped_column(String(1000))
    owner: Mapped[str] = mapped_column(String(32), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
