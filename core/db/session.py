"""Engines and sessions for the configured database (SQLite or PostgreSQL)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from core.config import get_settings
from core.lazy import locked_cache


@locked_cache(maxsize=8)
def get_engine(url: str | None = None) -> Engine:
    """One engine per URL; SQLite gets WAL mode and a busy timeout for multi-process use."""
    url = url or str(get_settings().database_url)
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def get_sessionmaker(url: str | None = None) -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(url), expire_on_commit=False)


@contextlib.contextmanager
def session_scope(url: str | None = None) -> Iterator[Session]:
    """A transaction: commits on success, rolls back on error."""
    session = get_sessionmaker(url)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def database_label(url: str | None = None) -> str:
    """The database URL (default: the configured one) with its password hidden, for log lines and messages."""
    from sqlalchemy.engine import make_url

    return make_url(url or str(get_settings().database_url)).render_as_string(hide_password=True)
