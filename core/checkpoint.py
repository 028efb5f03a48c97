"""LangGraph checkpointers for every agent: SQLite under ``settings.home`` by default, PostgreSQL when the app DB is.

A graph compiled with one of these savers writes a checkpoint after every node, so a
killed run keyed by a thread id continues from its last finished node when invoked
again with the same thread id.

Each agent names its own store (``checkpointer("defame")``, ``checkpointer("pae")``):
on SQLite that is ``<home>/<name>/checkpoints.sqlite``; on PostgreSQL every agent
shares the application database (LangGraph's tables are keyed by thread id, and each
agent prefixes its thread ids).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def sqlite_path(name: str) -> Path:
    """``<home>/<name>/checkpoints.sqlite`` (its folder is created)."""
    from core.config import get_settings

    if not _NAME.match(name):
        raise ValueError(f"checkpointer name {name!r} must match {_NAME.pattern} (it becomes a folder name)")
    path = Path(get_settings().home) / name / "checkpoints.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _postgres_url(database_url: str) -> str:
    # psycopg takes a libpq URL; SQLAlchemy's "+psycopg" driver suffix is not one.
    return re.sub(r"^postgresql\+\w+://", "postgresql://", database_url, count=1)


@contextlib.contextmanager
def checkpointer(name: str, *, path: str | Path | None = None) -> Iterator[Any]:
    """A ready LangGraph checkpoint saver (tables created), closed on exit.

    Args:
        name: the agent's store (``"defame"``, ``"pae"``): the SQLite file's folder under ``settings.home``.
        path: an explicit SQLite file instead (tests, one-off runs); always SQLite, even on PostgreSQL.

    Yields:
        a ``PostgresSaver`` when ``settings.database_url`` is PostgreSQL (and no ``path``), else a ``SqliteSaver``.
    """
    from core.config import get_settings

    settings = get_settings()
    if path is None and settings.is_postgres:
        from langgraph.checkpoint.postgres import PostgresSaver

        if not _NAME.match(name):
            raise ValueError(f"checkpointer name {name!r} must match {_NAME.pattern}")
        with PostgresSaver.from_conn_string(_postgres_url(str(settings.database_url))) as saver:
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    file = Path(path) if path is not None else sqlite_path(name)
    file.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(file)) as saver:
        saver.setup()
        yield saver
