"""LangGraph checkpointers: one namespace per store and per owner, SQLite by default, PostgreSQL when the app DB is.

A graph compiled with one of these savers writes a checkpoint after every node, so a killed run keyed
by a thread id continues from its last finished node when invoked again with the same thread id.

Namespaces
----------
A checkpoint is found by its thread id *inside a namespace*; no thread id reaches another namespace:

* ``checkpointer("defame")`` — the **jobs' internal** store of one graph. Its thread ids are made by
  server code (``clinical_got:{mode}:{case}:{hash}``, ``job-{job id}``) and no client names one.
* ``checkpointer("defame", owner=key_id)`` — the Agent Protocol threads of **one API key** for that
  graph (``/v1/langgraph``): a client chooses its thread ids freely, inside its own namespace only.

On SQLite a namespace is a file: ``<home>/<name>/checkpoints.sqlite`` for the jobs (unchanged since
the first release), ``<home>/agent_protocol/owners/<digest of owner>/<name>.sqlite`` for a key. On
PostgreSQL it is a schema of the application database (LangGraph's tables are unqualified, and the
connection's ``search_path`` names the schema): ``ckpt_<name>_<digest>`` for the jobs,
``apt_<digest of owner and name>`` for a key. The schema and its tables are created on first use,
under an advisory lock (two processes opening a new namespace at once do not race), once per process.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_OWNER = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ready: set[tuple[str, str]] = set()  # (database url, schema) whose tables this process has set up
_ready_lock = threading.Lock()


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(f"checkpointer name {name!r} must match {_NAME.pattern} (it becomes a folder name)")


def _check_owner(owner: str) -> None:
    if not _OWNER.match(owner):
        raise ValueError(f"checkpoint owner {owner!r} must match {_OWNER.pattern}")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def sqlite_path(name: str, *, owner: str | None = None) -> Path:
    """The SQLite file of a namespace (its folder is created): the jobs' store of ``name``, or ``owner``'s."""
    from core.config import get_settings

    _check_name(name)
    home = Path(get_settings().home)
    if owner is None:
        path = home / name / "checkpoints.sqlite"
    else:
        _check_owner(owner)
        path = home / "agent_protocol" / "owners" / _digest("owner", owner)[:32] / f"{name}.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def postgres_schema(name: str, *, owner: str | None = None) -> str:
    """The PostgreSQL schema of a namespace (lowercase letters, digits and ``_``; at most 63 characters)."""
    _check_name(name)
    if owner is None:
        slug = name.replace("-", "_")[:40]
        return f"ckpt_{slug}_{_digest('jobs', name)[:8]}"
    _check_owner(owner)
    return f"apt_{_digest('owner', owner, name)[:40]}"


def postgres_url(database_url: str) -> str:
    """A libpq URL: psycopg does not take SQLAlchemy's ``+psycopg`` driver suffix."""
    return re.sub(r"^postgresql\+\w+://", "postgresql://", database_url, count=1)


def _setup_postgres_schema(conn: Any, saver: Any, url: str, schema: str) -> None:
    """Create ``schema`` and LangGraph's tables in it, once per process, one process at a time."""
    with _ready_lock:
        if (url, schema) in _ready:
            return
    lock_key = int(_digest("ckpt-setup", schema)[:15], 16)
    # try-lock in a loop, not pg_advisory_lock: LangGraph's migrations build indexes CONCURRENTLY, which wait
    # for every open transaction, and a session blocked in pg_advisory_lock is one (a deadlock)
    while not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (lock_key,)).fetchone()["ok"]:
        time.sleep(0.05)
    try:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')  # schema: [a-z0-9_] only (postgres_schema)
        saver.setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key,))
    with _ready_lock:
        _ready.add((url, schema))


@contextlib.contextmanager
def checkpointer(name: str, *, owner: str | None = None, path: str | Path | None = None) -> Iterator[Any]:
    """A ready LangGraph checkpoint saver for one namespace (tables created), closed on exit.

    Args:
        name: the graph's store (``"defame"``, ``"pae"``, ``"clinical_got"``).
        owner: ``None`` for the jobs' internal threads; an API key's id for that key's Agent Protocol threads.
        path: an explicit SQLite file instead (tests, one-off runs); always SQLite, even on PostgreSQL.

    Yields:
        a ``PostgresSaver`` when ``settings.database_url`` is PostgreSQL (and no ``path``), else a ``SqliteSaver``.
    """
    from core.config import get_settings

    settings = get_settings()
    if path is None and settings.is_postgres:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row

        schema = postgres_schema(name, owner=owner)
        url = postgres_url(str(settings.database_url))
        with Connection.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=f"-c search_path={schema}"
        ) as conn:
            saver = PostgresSaver(conn)
            _setup_postgres_schema(conn, saver, url, schema)
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    file = Path(path) if path is not None else sqlite_path(name, owner=owner)
    file.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(file)) as saver:
        saver.setup()
        yield saver
