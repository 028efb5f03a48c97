"""Threads and runs of the Agent Protocol: records in a LangGraph store, graph state in the owner's checkpointer.

* Records (thread: graph, metadata, status; run: status, request, job, error; the run's stream events) live in
  a LangGraph ``BaseStore``: SQLite ``<home>/agent_protocol/store.sqlite`` by default, ``PostgresStore`` in
  the application database when it is PostgreSQL, so the API processes and the workers read the same ones.
* **Every record lives under its owner's namespace** (``("agent_protocol", "threads", <key id>)``): a thread
  id names a thread only among the calling key's threads, so another key's thread is a 404 whatever the id,
  and creating a thread never tells whether another key uses that id.
* A thread's graph state lives in the owner's namespace of that graph's checkpointer
  (:func:`core.checkpoint.checkpointer` with ``owner=``), never in the store the jobs use: no client-chosen
  thread id reaches a job's internal thread, nor another key's.
* Runs execute as jobs on the workers (:mod:`services.api.agent_exec`); the run record names its job.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from core.checkpoint import checkpointer
from services.api import graphs

log = logging.getLogger(__name__)

RUN_STATUSES_LIVE = ("pending", "running")
THREAD_STATUSES = ("idle", "busy", "interrupted", "error")
_setup_done: set[str] = set()
_setup_lock = threading.Lock()


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


@contextlib.contextmanager
def open_store() -> Iterator[Any]:
    """The LangGraph store holding thread and run records (its tables set up once per process), closed on exit."""
    from core.config import get_settings

    settings = get_settings()
    if settings.is_postgres:
        from langgraph.store.postgres import PostgresStore

        from core.checkpoint import postgres_url

        where = postgres_url(str(settings.database_url))
        cm = PostgresStore.from_conn_string(where)
    else:
        from langgraph.store.sqlite import SqliteStore

        from core.checkpoint import sqlite_path

        where = str(sqlite_path("agent_protocol").with_name("store.sqlite"))
        cm = SqliteStore.from_conn_string(where)
    with cm as store:
        if where not in _setup_done:
            with _setup_lock:
                if where not in _setup_done:
                    store.setup()
                    _setup_done.add(where)
        yield store


# --- namespaces -------------------------------------------------------------------------------------


def _threads_ns(owner: str) -> tuple[str, ...]:
    return ("agent_protocol", "threads", owner)


def _runs_ns(owner: str, uid: str) -> tuple[str, ...]:
    return ("agent_protocol", "runs", owner, uid)


def _events_ns(owner: str, uid: str, run_id: str) -> tuple[str, ...]:
    return ("agent_protocol", "events", owner, uid, run_id)


def cancel_ns(owner: str, uid: str) -> tuple[str, ...]:
    """Where a cancellation request of one of the thread's runs is left for the worker running it."""
    return ("agent_protocol", "cancel", owner, uid)


def _exact(items: list[Any], ns: tuple[str, ...]) -> list[dict[str, Any]]:
    """The items of exactly ``ns`` (a store search matches every namespace that starts with its prefix)."""
    return [dict(i.value) for i in items if tuple(i.namespace) == ns]


# --- threads ----------------------------------------------------------------------------------------


def new_thread(*, owner: str, metadata: dict[str, Any] | None, thread_id: str | None = None) -> dict[str, Any]:
    """A new idle thread of ``owner`` (``thread_id`` as the client chose it, else a fresh uuid)."""
    t = now()
    record = {
        "thread_id": thread_id or str(uuid.uuid4()),
        "uid": uuid.uuid4().hex,  # names the thread's runs and events in the store: never chosen by a client
        "owner": owner,
        "graph_id": None,
        "metadata": metadata or {},
        "status": "idle",
        "created_at": t,
        "updated_at": t,
    }
    with open_store() as store:
        store.put(_threads_ns(owner), record["thread_id"], record)
    return record


def get_thread(owner: str, thread_id: str) -> dict[str, Any] | None:
    """``owner``'s thread ``thread_id``, or ``None`` (another key's thread of that id is not looked at)."""
    with open_store() as store:
        item = store.get(_threads_ns(owner), thread_id)
    return dict(item.value) if item else None


def update_thread(owner: str, thread_id: str, **changes: Any) -> dict[str, Any]:
    with open_store() as store:
        item = store.get(_threads_ns(owner), thread_id)
        if item is None:
            raise LookupError(f"no thread {thread_id!r}")
        record = {**item.value, **changes, "updated_at": now()}
        store.put(_threads_ns(owner), thread_id, record)
    return record


def search_threads(
    *, owner: str, metadata: dict[str, Any] | None, status: str | None, limit: int, offset: int
) -> list[dict[str, Any]]:
    """``owner``'s threads, newest first, filtered by metadata and status."""
    ns = _threads_ns(owner)
    with open_store() as store:
        rows = _exact(store.search(ns, limit=10_000), ns)
    if metadata:
        rows = [r for r in rows if all((r.get("metadata") or {}).get(k) == v for k, v in metadata.items())]
    if status:
        rows = [r for r in rows if r.get("status") == status]
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return rows[offset : offset + limit]


def delete_thread(record: dict[str, Any]) -> None:
    """Delete the thread, its runs, their events and its checkpoints (in its owner's namespace only)."""
    owner, uid = record["owner"], record["uid"]
    with open_store() as store:
        for run in _exact(store.search(_runs_ns(owner, uid), limit=10_000), _runs_ns(owner, uid)):
            ns = _events_ns(owner, uid, run["run_id"])
            for item in store.search(ns, limit=1_000_000):
                if tuple(item.namespace) == ns:
                    store.delete(ns, item.key)
            store.delete(_runs_ns(owner, uid), run["run_id"])
            store.delete(cancel_ns(owner, uid), run["run_id"])
        store.delete(_threads_ns(owner), record["thread_id"])
    if record.get("graph_id"):
        with checkpointer(record["graph_id"], owner=owner) as saver:
            saver.delete_thread(record["thread_id"])


# --- runs -------------------------------------------------------------------------------------------


def put_run(thread: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    run = {**run, "updated_at": now()}
    with open_store() as store:
        store.put(_runs_ns(thread["owner"], thread["uid"]), run["run_id"], run)
    return run


def get_run(thread: dict[str, Any], run_id: str) -> dict[str, Any] | None:
    with open_store() as store:
        item = store.get(_runs_ns(thread["owner"], thread["uid"]), run_id)
    return dict(item.value) if item else None


def list_runs(thread: dict[str, Any], *, limit: int, offset: int) -> list[dict[str, Any]]:
    ns = _runs_ns(thread["owner"], thread["uid"])
    with open_store() as store:
        rows = _exact(store.search(ns, limit=10_000), ns)
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return rows[offset : offset + limit]


# --- stream events ----------------------------------------------------------------------------------


class EventLog:
    """The stream chunks of one run, in order (``seq`` 0, 1, …), written by the worker, read by any API process."""

    def __init__(self, store: Any, thread: dict[str, Any], run_id: str) -> None:
        self.store = store
        self.ns = _events_ns(thread["owner"], thread["uid"], run_id)

    def next_seq(self) -> int:
        """The seq the next event gets (a resumed run continues after the events of its earlier attempts)."""
        return sum(1 for i in self.store.search(self.ns, limit=1_000_000) if tuple(i.namespace) == self.ns)

    def append(self, seq: int, event: str, data: Any) -> None:
        self.store.put(self.ns, f"{seq:09d}", {"event": event, "data": data}, index=False)

    def read(self, start: int) -> list[tuple[int, str, Any]]:
        """Events ``start``, ``start + 1``, … as far as they are written."""
        out = []
        while (item := self.store.get(self.ns, f"{start + len(out):09d}")) is not None:
            out.append((start + len(out), item.value["event"], item.value["data"]))
        return out


# --- graph state ------------------------------------------------------------------------------------


def _empty_state(thread_id: str) -> dict[str, Any]:
    return {
        "values": {},
        "next": [],
        "checkpoint": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
        "metadata": {},
        "created_at": None,
        "parent_checkpoint": None,
        "tasks": [],
        "interrupts": [],
    }


def thread_state(record: dict[str, Any], *, checkpoint_id: str | None = None) -> dict[str, Any]:
    """The thread's current (or a past) ``ThreadState``; empty values before its first run."""
    thread_id = record["thread_id"]
    if not record.get("graph_id"):
        return _empty_state(thread_id)
    spec = graphs.resolve(record["graph_id"])
    cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if checkpoint_id:
        cfg["configurable"]["checkpoint_id"] = checkpoint_id
    with checkpointer(spec.graph_id, owner=record["owner"]) as saver:
        return graphs.snapshot_json(thread_id, graphs.with_checkpointer(spec, saver).get_state(cfg))


def thread_history(record: dict[str, Any], *, limit: int) -> list[dict[str, Any]]:
    if not record.get("graph_id"):
        return []
    spec = graphs.resolve(record["graph_id"])
    cfg = {"configurable": {"thread_id": record["thread_id"]}}
    with checkpointer(spec.graph_id, owner=record["owner"]) as saver:
        graph = graphs.with_checkpointer(spec, saver)
        return [graphs.snapshot_json(record["thread_id"], s) for s in graph.get_state_history(cfg, limit=limit)]


def public_thread(record: dict[str, Any], *, values: bool = True) -> dict[str, Any]:
    """The ``Thread`` object clients see (values and interrupts from the checkpointer)."""
    out = {k: record[k] for k in ("thread_id", "created_at", "updated_at", "metadata", "status")}
    out["metadata"] = {**out["metadata"], **({"graph_id": record["graph_id"]} if record.get("graph_id") else {})}
    state = thread_state(record) if values else None
    out["values"] = state["values"] if state else {}
    out["interrupts"] = {t["id"]: t["interrupts"] for t in state["tasks"] if t["interrupts"]} if state else {}
    return out


def public_run(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata")
    return {**{k: record.get(k) for k in keys}, "multitask_strategy": "reject", "kwargs": record.get("kwargs", {})}
