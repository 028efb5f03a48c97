"""LangGraph checkpointers: SQLite under ``settings.home`` by default, PostgreSQL when the app DB is.

A run keyed by a thread id writes a checkpoint after every stage, so a killed
run continues from its last finished stage when invoked again with the same
thread id.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def sqlite_path() -> Path:
    from core.config import get_settings

    path = Path(get_settings().home) / "defame" / "checkpoints.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def open_checkpointer(path: str | Path | None = None) -> Iterator[Any]:
    """A ready checkpointer: Postgres when ``settings.is_postgres``, else SQLite (``path`` or the default)."""
    from core.config import get_settings

    settings = get_settings()
    if path is None and settings.is_postgres:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        url = str(settings.database_url).replace("postgresql+psycopg://", "postgresql://", 1)
        with psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            saver = PostgresSaver(conn)
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path or sqlite_path()), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        yield saver
    finally:
        conn.close()
