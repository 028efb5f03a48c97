"""Agent Protocol runs execute as jobs on the workers (job type ``langgraph.run``), like every other job.

An API process that accepts a run records it (:mod:`services.api.agent_runs`), claims its thread and
sends a ``langgraph.run`` job owned by the calling key (:func:`submit_run`). A worker runs the graph
(:func:`run_agent`): each chunk of the requested stream modes is appended to the run's event log, its
progress, heartbeat, cancellation and retries are the job's. Whichever API process the client talks to
then follows the records (:func:`follow`, :func:`wait_done`), so a client can reconnect to
``/runs/{id}/stream`` or ``/join`` after the API restarted, and the run goes on while no API is up.

* **Worker killed** (``kill -9``): the job's heartbeat goes stale, the reaper sends it again, and the next
  attempt continues the graph from its last checkpoint (the thread's newest checkpoint is no longer the one
  the run started from), appending to the same event log.
* **Cancel**: a flag beside the run record plus the job's own cancellation; the graph stops between two
  steps and the thread is left ``interrupted`` (a new run with ``input: null`` resumes it).
* **Ownership**: the job's owner is the key's id; the worker reads the thread and run in that key's
  namespace only, and refuses a run recorded for another job.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from core.checkpoint import checkpointer
from core.jobs import JobCancelled, JobContext, Report, TransientError, register_method
from services.api import agent_runs as records
from services.api import graphs

log = logging.getLogger(__name__)

METHOD = "langgraph.run"
THREAD_ID_PATTERN = r"^[A-Za-z0-9_.:-]+$"
_claims = threading.Lock()


@dataclass
class RunRequest:
    """What one run does (validated by the route, stored with the run, rebuilt by the worker)."""

    spec: graphs.GraphSpec
    input: Any = None
    command: dict[str, Any] | None = None
    context: dict[str, Any] | None = None  # the client's JSON; graphs.context_for validates it
    stream_mode: list[str] = field(default_factory=lambda: ["values"])
    interrupt_before: list[str] | str | None = None
    interrupt_after: list[str] | str | None = None
    checkpoint_id: str | None = None
    recursion_limit: int = 100

    def record(self) -> dict[str, Any]:
        return {
            "graph_id": self.spec.graph_id,
            "input": self.input,
            "command": self.command,
            "context": self.context,
            "stream_mode": self.stream_mode,
            "interrupt_before": self.interrupt_before,
            "interrupt_after": self.interrupt_after,
            "checkpoint_id": self.checkpoint_id,
            "recursion_limit": self.recursion_limit,
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> RunRequest:
        return cls(spec=graphs.resolve(rec["graph_id"]), **{k: v for k, v in rec.items() if k != "graph_id"})


# --- the job (worker side) --------------------------------------------------------------------------


class RunJobParams(BaseModel):
    """The run a ``langgraph.run`` job executes: a thread and run recorded by the Agent Protocol routes."""

    model_config = ConfigDict(extra="forbid")
    thread_id: str = Field(..., min_length=1, max_length=100, pattern=THREAD_ID_PATTERN, description="The thread.")
    run_id: str = Field(..., min_length=1, max_length=100, pattern=r"^[0-9a-f-]+$", description="The run.")


def _job_owner(job_id: str) -> str:
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        job = crud.get_job(s, job_id=job_id)
        if job is None:
            raise LookupError(f"no job {job_id}")
        return job.owner


def cancel_requested(thread: dict[str, Any], run_id: str) -> bool:
    with records.open_store() as store:
        return store.get(records.cancel_ns(thread["owner"], thread["uid"]), run_id) is not None


@register_method(
    METHOD,
    title="Agent Protocol run",
    description="One run of a LangGraph graph on an Agent Protocol thread (started by /v1/langgraph).",
    queue="cpu",
    tags=("agent-protocol",),
    internal=True,  # submitted by the Agent Protocol routes only: not a method of /v1/methods, MCP, CLI or UI
)
def run_agent(params: RunJobParams, progress: JobContext) -> Report:
    """Run (or resume) the graph of a recorded run; its chunks go to the run's event log."""
    if not progress.job_id:
        raise ValueError(f"{METHOD} runs only as a job started by the Agent Protocol routes (/v1/langgraph)")
    owner = _job_owner(progress.job_id)
    thread = records.get_thread(owner, params.thread_id)
    run = records.get_run(thread, params.run_id) if thread else None
    if thread is None or run is None:
        raise LookupError(f"no run {params.run_id} on thread {params.thread_id} of this job's key")
    if run.get("job_id") != progress.job_id:
        raise PermissionError(f"run {params.run_id} was recorded for another job")
    if run["status"] not in records.RUN_STATUSES_LIVE:  # a redelivered message after the end
        return Report(title=f"Agent Protocol run {run['run_id']}", summary=run["status"])
    run = execute(thread, run, RunRequest.from_record(run["request"]), progress)
    if run["status"] == "error":
        raise RuntimeError(f"{run['graph_id']} run {run['run_id']} failed: {(run.get('error') or {}).get('message')}")
    return Report(title=f"Agent Protocol run {run['run_id']}", summary=f"{run['graph_id']}: {run['status']}")


def execute(thread: dict[str, Any], run: dict[str, Any], req: RunRequest, progress: JobContext) -> dict[str, Any]:
    """Stream the graph on the thread (from its last checkpoint if an earlier attempt began), recording the end."""
    from langgraph.types import Command

    thread_id, run_id = thread["thread_id"], run["run_id"]
    status, error, cancelled = "success", None, False
    with records.open_store() as store:
        events = records.EventLog(store, thread, run_id)
        seq = events.next_seq()

        def emit(mode: str, chunk: Any) -> None:
            nonlocal seq
            events.append(seq, mode, graphs.jsonable(chunk))
            seq += 1

        try:
            cfg: dict[str, Any] = {"configurable": {"thread_id": thread_id}, "recursion_limit": req.recursion_limit}
            with checkpointer(req.spec.graph_id, owner=thread["owner"]) as saver:
                graph = graphs.with_checkpointer(req.spec, saver)
                latest = _checkpoint_id(graph.get_state({"configurable": {"thread_id": thread_id}}))
                payload: Any = Command(**req.command) if req.command else req.input
                if "base_checkpoint" not in run:  # the first attempt: remember where the run starts
                    run = records.put_run(
                        thread, {**run, "base_checkpoint": latest, "status": "running", "attempts": 1}
                    )
                    if req.checkpoint_id:
                        cfg["configurable"]["checkpoint_id"] = req.checkpoint_id
                else:
                    run = records.put_run(thread, {**run, "status": "running", "attempts": run.get("attempts", 1) + 1})
                    if latest != run["base_checkpoint"]:  # an earlier attempt got this far: continue from there
                        log.info("run %s: resuming thread %s from checkpoint %s", run_id, thread_id, latest)
                        payload = None
                    elif req.checkpoint_id:
                        cfg["configurable"]["checkpoint_id"] = req.checkpoint_id
                context = graphs.context_for(req.spec, req.context)
                steps = 0
                for mode, chunk in graph.stream(
                    payload,
                    cfg,
                    context=context,
                    stream_mode=req.stream_mode,
                    interrupt_before=req.interrupt_before,
                    interrupt_after=req.interrupt_after,
                ):
                    emit(mode, chunk)
                    steps += 1
                    progress(0.0, f"{req.spec.graph_id}: {steps} chunk(s)")  # raises JobCancelled when cancelled
                    if cancel_requested(thread, run_id):
                        status = "interrupted"
                        break
                snap = graph.get_state({"configurable": {"thread_id": thread_id}})
                if status == "success" and (snap.next or getattr(snap, "interrupts", ())):
                    status = "interrupted"
        except JobCancelled:
            status, cancelled = "interrupted", True
        except TransientError:
            raise  # the job is retried and the next attempt continues from the last checkpoint
        except Exception as exc:
            log.exception("run %s on thread %s failed", run_id, thread_id)
            status, error = "error", {"error": type(exc).__name__, "message": str(exc)[:2000]}
            emit("error", error)
    records.update_thread(thread["owner"], thread_id, status={"success": "idle"}.get(status, status))
    run = records.put_run(thread, {**run, "status": status, "error": error})
    if cancelled:
        raise JobCancelled(f"run {run_id} cancelled")
    return run


def _checkpoint_id(snap: Any) -> str | None:
    return ((snap.config or {}).get("configurable") or {}).get("checkpoint_id")


# --- the API side -----------------------------------------------------------------------------------


def live_run(thread: dict[str, Any]) -> dict[str, Any] | None:
    """The thread's run still pending or running, if any (runs whose job ended unrecorded are closed first)."""
    for r in records.list_runs(thread, limit=1000, offset=0):
        if r["status"] in records.RUN_STATUSES_LIVE:
            run = current(thread, r["run_id"])
            if run is not None and run["status"] in records.RUN_STATUSES_LIVE:
                return run
    return None


def claim_thread(thread: dict[str, Any], graph_id: str) -> str | None:
    """Mark the thread busy for a new run; returns why not (busy, or bound to another graph), else ``None``.

    A thread left busy by a run whose job has ended without recording it (failed for good, cancelled
    before it started) is released (:func:`current`).
    """
    with _claims:
        record = records.get_thread(thread["owner"], thread["thread_id"]) or thread
        if record.get("status") == "busy" and live_run(record) is not None:
            return f"thread {record['thread_id']} is busy with another run (multitask strategy: reject)"
        if record.get("graph_id") not in (None, graph_id):
            return f"thread {record['thread_id']} runs graph {record['graph_id']!r}, not {graph_id!r}"
        records.update_thread(record["owner"], record["thread_id"], status="busy", graph_id=graph_id)
    return None


def submit_run(thread: dict[str, Any], run: dict[str, Any], *, send: Callable[[Any], None]) -> dict[str, Any]:
    """Send the run's ``langgraph.run`` job (owned by the thread's owner); returns the run with its job id.

    The run record names its job before the message leaves, so the worker always finds the link. If the
    broker refuses the message, the run ends ``error`` and the thread is released (``EnqueueError`` raised).
    """
    from core.jobs.dispatch import enqueue

    linked: dict[str, Any] = {}

    def link_then_send(job: Any) -> None:
        linked.update(records.put_run(thread, {**run, "job_id": job.id}))
        send(job)

    try:
        enqueue(
            METHOD,
            {"thread_id": thread["thread_id"], "run_id": run["run_id"]},
            owner=thread["owner"],
            idempotency_key=f"langgraph-run-{run['run_id']}",
            send=link_then_send,
        )
    except Exception as exc:
        error = {"error": type(exc).__name__, "message": str(exc)[:2000]}
        records.put_run(thread, {**(linked or run), "status": "error", "error": error})
        records.update_thread(thread["owner"], thread["thread_id"], status="idle")
        raise
    return linked


def current(thread: dict[str, Any], run_id: str) -> dict[str, Any] | None:
    """The run's record, brought in line with its job: a live run whose job has ended is marked ended."""
    run = records.get_run(thread, run_id)
    if run is None or run["status"] not in records.RUN_STATUSES_LIVE or not run.get("job_id"):
        return run
    from core.jobs.dispatch import rows

    (job,) = rows([run["job_id"]])
    if job is not None and not job.ended:
        return run
    run = records.get_run(thread, run_id) or run  # the worker may have written the end meanwhile
    if run["status"] not in records.RUN_STATUSES_LIVE:
        return run
    if job is not None and job.status == "cancelled":
        status, error = "interrupted", None
    else:
        why = (job.message or job.error or job.status) if job is not None else "its job is gone"
        status, error = "error", {"error": "JobFailed", "message": f"the run's job ended: {why}"[:2000]}
    log.warning("run %s: its job ended (%s) without recording the run's end; marking it %s", run_id, job, status)
    run = records.put_run(thread, {**run, "status": status, "error": error})
    fresh = records.get_thread(thread["owner"], thread["thread_id"])
    if fresh is not None and fresh.get("status") == "busy":
        state = records.thread_state(fresh)
        records.update_thread(
            thread["owner"],
            thread["thread_id"],
            status="error" if error else "interrupted" if state["next"] else "idle",
        )
    return run


def request_cancel(thread: dict[str, Any], run_id: str) -> bool:
    """Ask a live run to stop between two steps (its job too); False if it had already ended."""
    run = current(thread, run_id)
    if run is None or run["status"] not in records.RUN_STATUSES_LIVE:
        return False
    with records.open_store() as store:
        store.put(records.cancel_ns(thread["owner"], thread["uid"]), run_id, {"at": records.now()}, index=False)
    if run.get("job_id"):
        _cancel_job(run["job_id"])
    return True


def _cancel_job(job_id: str) -> None:
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        job = crud.request_cancel(s, job_id=job_id)
        status = job.status if job is not None else None
    if status == "cancelled":
        from services.worker.tasks.jobs import revoke

        revoke(job_id)


async def wait_done(thread: dict[str, Any], run_id: str, timeout_s: float) -> dict[str, Any]:
    """Wait for a run to end (polling its record with a backoff); returns its last record."""
    loop = asyncio.get_running_loop()
    deadline, delay = loop.time() + timeout_s, 0.02
    while True:
        run = await run_in_threadpool(current, thread, run_id)
        if run is None or run["status"] not in records.RUN_STATUSES_LIVE or loop.time() >= deadline:
            return run or {}
        await asyncio.sleep(delay)
        delay = min(0.25, delay * 1.5)


async def follow(
    thread: dict[str, Any], run_id: str, *, start: int = 0, timeout_s: float = 3600.0
) -> AsyncIterator[tuple[int, str, Any]]:
    """The run's events ``(seq, stream mode, chunk)`` from ``start``, as the worker writes them, until the run ends."""
    loop = asyncio.get_running_loop()
    deadline, delay, seq = loop.time() + timeout_s, 0.02, start
    while True:
        run = await run_in_threadpool(current, thread, run_id)
        ended = run is None or run["status"] not in records.RUN_STATUSES_LIVE
        fresh = await run_in_threadpool(_read_events, thread, run_id, seq)
        for item in fresh:
            yield item
        seq += len(fresh)
        if ended or loop.time() >= deadline:  # events are written before the end is: none is missed
            return
        if fresh:
            delay = 0.02
        else:
            await asyncio.sleep(delay)
            delay = min(0.25, delay * 1.5)


def _read_events(thread: dict[str, Any], run_id: str, start: int) -> list[tuple[int, str, Any]]:
    with records.open_store() as store:
        return records.EventLog(store, thread, run_id).read(start)
