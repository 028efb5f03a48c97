"""The job store: all SQL on the job tables, behind one interface (:class:`JobStore`).

:func:`get_job_store` returns the implementation for the configured database:
:class:`~core.db.jobstore.postgres.PostgresJobStore` (one-statement hot paths, LISTEN/NOTIFY,
asynchronous commits for the worker's own state changes) or
:class:`~core.db.jobstore.sqlite.SQLiteJobStore` (the portable ORM path); any other SQLAlchemy
URL gets the portable :class:`~core.db.jobstore.sql.SqlJobStore`. The job lifecycle
(:mod:`core.jobs.submit`, :mod:`core.jobs.execute`, :mod:`core.jobs.reap`) only calls this
interface; ``tests/core/db/test_job_sql_in_one_place.py`` holds that no module outside
``core/db`` builds SQL on the job tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from core.config import get_settings
from core.db.jobstore.base import NOTIFY_CHANNEL, Claim, JobStore, NewArtifact, NewJob
from core.lazy import locked_cache

__all__ = [
    "NOTIFY_CHANNEL",
    "Claim",
    "JobStore",
    "NewArtifact",
    "NewJob",
    "get_job_store",
    "state_transaction",
]


def get_job_store(url: str | None = None) -> JobStore:
    """The job store of ``url`` (default: ``settings.database_url``, read on every call)."""
    return _store(url, url or str(get_settings().database_url))


@locked_cache(maxsize=16)
def _store(url: str | None, target: str) -> JobStore:
    if target.startswith("postgresql"):
        from core.db.jobstore.postgres import PostgresJobStore

        return PostgresJobStore(url)
    if target.startswith("sqlite"):
        from core.db.jobstore.sqlite import SQLiteJobStore

        return SQLiteJobStore(url)
    from core.db.jobstore.sql import SqlJobStore

    return SqlJobStore(url)


@contextmanager
def state_transaction() -> Iterator[Session]:
    """The configured store's :meth:`~JobStore.state_transaction` (a worker's own state changes)."""
    with get_job_store().state_transaction() as s:
        yield s
