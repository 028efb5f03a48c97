"""Threads and runs of the Agent Protocol: records in a LangGraph store, graph state in our checkpointer.

* Records (thread: owner, graph, metadata, status; run: status, kwargs, error) live in a LangGraph
  ``BaseStore``: SQLite ``<home>/agent_protocol/store.sqlite`` by default, ``PostgresStore`` in the
  application database when it is PostgreSQL, so any API process can read them.
* A thread's graph state lives in that graph's checkpointer (:func:`core.checkpoint.checkpointer`,
  thread id = the protocol's thread id), so ``GET /threads/{id}/state`` and resuming an interrupted
  run work from any process, after a restart too.
* A run executes in a thread of the API process that accepted it (streamed or in the background);
  cancelling it stops the graph between two steps and leaves the thread ``interrupted``, so a new
  run with ``input: null`` resumes it from its last checkpoint.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.checkpoint import checkpointer
from services.api import graphs

log = logging.getLogger(__name__)

THREADS = ("agent_protocol", "threads")
RUN_STATUSES_LIVE = ("pending", "running")
Emit = Callable[[str, Any], None]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


@contextlib.contextmanager
def open_store() -> Iterator[Any]:
    """The LangGraph store holding thread and run records (set up on open, closed on exit)."""
    from core.config import get_settings

    settings = get_settings()
    if settings.is_postgres:
        from langgraph.store.postgres import PostgresStore

        from core.checkpoint import _postgres_url

        with PostgresStore.from_conn_string(_postgres_url(str(settings.database_url))) as store:
            store.setup()
            yield store
        return
    from langgraph.store.sqlite import SqliteStore

    from core.checkpoint import sqlite_path

    path = sqlite_path("agent_protocol").with_name("store.sqlite")
    with SqliteStore.from_conn_string(str(path)) as store:
        store.setup()
        yield store


# --- records ----------------------------------------------------------------------------------------


def _runs_ns(thread_id: str) -> tuple[str, ...]:
    return ("agent_protocol", "runs", thread_id)


def new_thread(*, owner: str, metadata: dict[str, Any] | None, thread_id: str | None = None) -> dict[str, Any]:
    t = now()
    record = {
        "thread_id": thread_id or str(uuid.uuid4()),
        "owner": owner,
        "graph_id": None,
        "metadata": metadata or {},
        "status": "idle",
        "created_at": t,
        "updated_at": t,
    }
    with open_store() as store:
        store.put(THREADS, record["thread_id"], record)
    return record


def get_thread(thread_id: str) -> dict[str, Any] | None:
    with open_store() as store:
        item = store.get(THREADS, thread_id)
    return dict(item.value) if item else None


def update_thread(thread_id: str, **changes: Any) -> dict[str, Any]:
    with open_store() as store:
        item = store.get(THREADS, thread_id)
        record = {**(item.value if item else {}), **changes, "updated_at": now()}
        store.put(THREADS, thread_id, record)
    return record


def search_threads(
    *, owner: str | None, metadata: dict[str, Any] | None, status: str | None, limit: int, offset: int
) -> list[dict[str, Any]]:
    """Threads of ``owner`` (everyone's for ``None``), newest first, filtered by metadata and status."""
    with open_store() as store:
        items = store.search(THREADS, filter={"owner": owner} if owner else None, limit=10_000)
    rows = [dict(i.value) for i in items]
    if metadata:
        rows = [r for r in rows if all((r.get("metadata") or {}).get(k) == v for k, v in metadata.items())]
    if status:
        rows = [r for r in rows if r.get("status") == status]
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return rows[offset : offset + limit]


def delete_thread(thread_id: str) -> None:
    record = get_thread(thread_id)
    with open_store() as store:
        for item in store.search(_runs_ns(thread_id), limit=10_000):
            store.delete(_runs_ns(thread_id), item.key)
        store.delete(THREADS, thread_id)
    if record and record.get("graph_id"):
        with checkpointer(record["graph_id"]) as saver:
            saver.delete_thread(thread_id)


def put_run(record: dict[str, Any]) -> dict[str, Any]:
    record = {**record, "updated_at": now()}
    with open_store() as store:
        store.put(_runs_ns(record["thread_id"]), record["run_id"], record)
    return record


def get_run(thread_id: str, run_id: str) -> dict[str, Any] | None:
    with open_store() as store:
        item = store.get(_runs_ns(thread_id), run_id)
    return dict(item.value) if item else None


def list_runs(thread_id: str, *, limit: int, offset: int) -> list[dict[str, Any]]:
    with open_store() as store:
        items = store.search(_runs_ns(thread_id), limit=10_000)
    rows = sorted((dict(i.value) for i in items), key=lambda r: r["created_at"], reverse=True)
    return rows[offset : offset + limit]


def thread_state(record: dict[str, Any], *, checkpoint_id: str | None = None) -> dict[str, Any]:
    """The thread's current (or a past) ``ThreadState``; empty values before its first run."""
    thread_id = record["thread_id"]
    if not record.get("graph_id"):
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
    spec = graphs.resolve(record["graph_id"])
    cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if checkpoint_id:
        cfg["configurable"]["checkpoint_id"] = checkpoint_id
    with checkpointer(spec.graph_id) as saver:
        return graphs.snapshot_json(thread_id, graphs.with_checkpointer(spec, saver).get_state(cfg))


def thread_history(record: dict[str, Any], *, limit: int) -> list[dict[str, Any]]:
    if not record.get("graph_id"):
        return []
    spec = graphs.resolve(record["graph_id"])
    cfg = {"configurable": {"thread_id": record["thread_id"]}}
    with checkpointer(spec.graph_id) as saver:
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


# --- execution --------------------------------------------------------------------------------------


@dataclass
class RunRequest:
    """What one run does (validated by the route): graph, input or command, stream modes, interrupts."""

    spec: graphs.GraphSpec
    input: Any = None
    command: dict[str, Any] | None = None
    context: Any = None
    stream_mode: list[str] = field(default_factory=lambda: ["values"])
    interrupt_before: list[str] | str | None = None
    interrupt_after: list[str] | str | None = None
    checkpoint_id: str | None = None
    recursion_limit: int = 100


@dataclass
class ActiveRun:
    """A run executing in this process: ``cancel`` stops it between steps; ``done`` is set at its end."""

    run_id: str
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


ACTIVE: dict[str, ActiveRun] = {}
_LOCK = threading.Lock()


def process_name() -> str:
    """``host:pid`` of this API process (recorded on the runs it executes)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _orphaned(run: dict[str, Any]) -> bool:
    """A live run whose API process is gone: recorded on this host, by a pid that no longer exists."""
    host, _, pid = str(run.get("process") or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False  # another host's run only that host can judge; ours end in execute's finally
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _release_orphans(thread_id: str) -> bool:
    """Mark the thread's orphaned live runs ``error``; True when no live run is left."""
    live = [r for r in list_runs(thread_id, limit=1000, offset=0) if r.get("status") in RUN_STATUSES_LIVE]
    for run in live:
        if _orphaned(run):
            put_run({**run, "status": "error", "error": {"error": "Orphaned", "message": "its API process stopped"}})
    return all(not (r.get("status") in RUN_STATUSES_LIVE and not _orphaned(r)) for r in live)


def claim_thread(thread_id: str, graph_id: str) -> str | None:
    """Mark the thread busy for a new run; returns why not (busy, or bound to another graph), else ``None``.

    A thread left busy by an API process that died (same host, pid gone) is taken over: its run is marked
    ``error`` and the thread resumes from its last checkpoint.
    """
    with _LOCK:
        record = get_thread(thread_id) or {}
        if record.get("status") == "busy" and not _release_orphans(thread_id):
            return f"thread {thread_id} is busy with another run (multitask strategy: reject)"
        if record.get("graph_id") not in (None, graph_id):
            return f"thread {thread_id} runs graph {record['graph_id']!r}, not {graph_id!r}"
        update_thread(thread_id, status="busy", graph_id=graph_id)
    return None


def execute(run: dict[str, Any], req: RunRequest, active: ActiveRun, emit: Emit) -> dict[str, Any]:
    """Run the graph on the run's thread, emitting ``(stream mode, chunk)``; records the outcome."""
    from langgraph.types import Command

    thread_id = run["thread_id"]
    run = put_run({**(get_run(thread_id, run["run_id"]) or run), "status": "running"})
    status, error, values = "success", None, None
    try:
        cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}, "recursion_limit": req.recursion_limit}
        if req.checkpoint_id:
            cfg["configurable"]["checkpoint_id"] = req.checkpoint_id
        payload = Command(**req.command) if req.command else req.input
        with checkpointer(req.spec.graph_id) as saver:
            graph = graphs.with_checkpointer(req.spec, saver)
            for mode, chunk in graph.stream(
                payload,
                cfg,
                context=req.context,
                stream_mode=req.stream_mode,
                interrupt_before=req.interrupt_before,
                interrupt_after=req.interrupt_after,
            ):
                emit(mode, graphs.jsonable(chunk))
                if active.cancel.is_set() or _cancel_requested(run):
                    status = "interrupted"
                    break
            snap = graph.get_state({"configurable": {"thread_id": thread_id}})
            values = graphs.jsonable(snap.values)
            if status == "success" and (snap.next or getattr(snap, "interrupts", ())):
                status = "interrupted"
    except Exception as exc:
        log.exception("run %s on thread %s failed", run["run_id"], thread_id)
        status, error = "error", {"error": type(exc).__name__, "message": str(exc)[:2000]}
        emit("error", error)
    finally:
        thread_status = {"success": "idle", "interrupted": "interrupted", "error": "error"}[status]
        update_thread(thread_id, status=thread_status)
        run = put_run({**run, "status": status, "error": error})
        active.done.set()
        with _LOCK:
            ACTIVE.pop(run["run_id"], None)
    return {"run": run, "values": values}


def start(
    run: dict[str, Any], req: RunRequest, emit: Emit, *, on_end: Callable[[dict[str, Any]], None] | None = None
) -> ActiveRun:
    """Execute ``run`` in a daemon thread of this process; ``on_end`` receives :func:`execute`'s result."""
    active = ActiveRun(run["run_id"])
    with _LOCK:
        ACTIVE[run["run_id"]] = active

    def target() -> None:
        result = execute(run, req, active, emit)
        if on_end is not None:
            on_end(result)

    threading.Thread(target=target, daemon=True, name=f"run-{run['run_id'][:8]}").start()
    return active


def request_cancel(thread_id: str, run_id: str) -> bool:
    """Stop a live run between two steps (here, or in the API process running it); False if it had ended."""
    run = get_run(thread_id, run_id)
    if run is None or run.get("status") not in RUN_STATUSES_LIVE:
        return False
    put_run({**run, "cancel_requested": True})
    with _LOCK:
        active = ACTIVE.get(run_id)
    if active is not None:
        active.cancel.set()
    return True


def _cancel_requested(run: dict[str, Any]) -> bool:
    current = get_run(run["thread_id"], run["run_id"]) or {}
    return bool(current.get("cancel_requested"))
