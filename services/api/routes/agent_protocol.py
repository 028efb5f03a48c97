"""The Agent Protocol routes LangGraph clients expect, for every graph of ``langgraph.json``.

Mounted at ``/v1/langgraph``: point LangGraph's SDK there
(``get_client(url="http://HOST:8000/v1/langgraph", headers={"Authorization": "Bearer <key>"})``).

* assistants: one per graph (``POST /assistants/search``, ``GET /assistants/{id}``, ``.../schemas``,
  ``.../graph``); the assistant id is the graph id or its uuid5, as ``langgraph dev`` makes it;
* threads: ``POST /threads``, ``POST /threads/search``, ``GET|DELETE /threads/{id}``,
  ``GET /threads/{id}/state[/{checkpoint_id}]``, ``POST /threads/{id}/history``;
* runs: ``POST /threads/{id}/runs/stream`` (Server-Sent Events: ``metadata``, then one event per
  chunk of each requested stream mode — ``values``, ``updates`` (node updates), ``custom``,
  ``tasks``, ``checkpoints``, ``debug`` — and ``error``), ``POST /threads/{id}/runs`` (background),
  ``.../runs/wait``, ``GET .../runs[/{run_id}[/join|/stream]]``, ``POST .../runs/{run_id}/cancel``, and the
  thread-less ``POST /runs/stream`` / ``POST /runs/wait``.

Every run is a ``langgraph.run`` job on the workers (:mod:`services.api.agent_exec`): progress, heartbeat,
cancellation, the reaper and ownership are the job's, and a run outlives the API process that accepted it.
Threads belong to the key that created them, each key in its own namespace (:mod:`services.api.agent_runs`).

Interrupts: ``interrupt_before`` / ``interrupt_after`` (node names or ``"*"``) stop a run before or
after those nodes; the thread is then ``interrupted`` and a new run with ``input: null`` (or
``command: {"resume": ...}`` for a graph that calls ``interrupt()``) continues it.

Why our own routes and not LangGraph's server: ``langgraph dev`` (``langgraph-cli[inmem]``) does run
offline on our ``langgraph.json``, but keeps threads in memory, authenticates nobody unless given a
custom auth module, passes a run's ``context`` to the graph without validating its nested config,
and its production runtime needs a license key; here the API's keys, owners, jobs and checkpointer apply.
"""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, HTTPException, Query, Response, status
from starlette.concurrency import run_in_threadpool

from core.jobs.lifecycle import EnqueueError
from services.api import agent_exec as execution
from services.api import agent_runs as runs
from services.api import deps, graphs
from services.api.agent_bodies import AssistantSearch, HistoryRequest, RunCreate, ThreadCreate, ThreadSearch
from services.api.deps import ApiKeyDep
from services.api.sse import Event, sse_response

router = APIRouter(prefix="/langgraph", tags=["agent protocol"])

STREAM_MODES = ("values", "updates", "custom", "tasks", "checkpoints", "debug")
MAX_WAIT_S = 3600.0


# --- helpers ---------------------------------------------------------------------------------------


def _spec(assistant_id: str) -> graphs.GraphSpec:
    try:
        return graphs.resolve(assistant_id)
    except graphs.UnknownGraph as exc:
        raise HTTPException(404, str(exc)) from None


def _assistant(spec: graphs.GraphSpec) -> dict[str, Any]:
    return {
        "assistant_id": spec.assistant_id,
        "graph_id": spec.graph_id,
        "name": spec.graph_id,
        "description": None,
        "config": {},
        "context": {},
        "metadata": {"created_by": "system"},
        "version": 1,
        "created_at": "1970-01-01T00:00:00+00:00",
        "updated_at": "1970-01-01T00:00:00+00:00",
    }


def _thread(thread_id: str, key) -> dict[str, Any]:
    """The calling key's thread ``thread_id``: threads are looked up among the key's own only (404 otherwise)."""
    record = runs.get_thread(key.id, thread_id) if len(thread_id) <= 100 else None
    if record is None:
        raise HTTPException(404, f"no thread {thread_id!r}")
    return record


def _modes(stream_mode: str | list[str]) -> list[str]:
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    bad = [m for m in modes if m not in STREAM_MODES]
    if bad or not modes:
        raise HTTPException(422, f"unsupported stream_mode {bad or modes}; supported: {', '.join(STREAM_MODES)}")
    return list(dict.fromkeys(modes))


def _request(body: RunCreate) -> execution.RunRequest:
    spec = _spec(body.assistant_id)
    known = set(graphs.nodes(spec))
    for name in ("interrupt_before", "interrupt_after"):
        value = getattr(body, name)
        if isinstance(value, list) and not set(value) <= known:
            raise HTTPException(422, f"{name}: unknown nodes {sorted(set(value) - known)}; nodes: {sorted(known)}")
    if body.input is not None and body.command is not None:
        raise HTTPException(422, "send input or command, not both")
    try:
        graphs.context_for(spec, body.context)  # validated here; the worker builds it again from the JSON
    except ValueError as exc:
        raise HTTPException(422, f"context: {exc}") from None
    checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    checkpoint_id = checkpoint_id or ((body.config.configurable or {}).get("checkpoint_id") if body.config else None)
    return execution.RunRequest(
        spec=spec,
        input=body.input,
        command=body.command.model_dump(exclude_none=True) if body.command else None,
        context=body.context or None,
        stream_mode=_modes(body.stream_mode),
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        checkpoint_id=str(checkpoint_id) if checkpoint_id else None,
        recursion_limit=body.config.recursion_limit if body.config else 100,
    )


def _prepare(thread_id: str | None, body: RunCreate, key) -> tuple[dict[str, Any], dict[str, Any]]:
    """Validate, find (or create) the key's thread, claim it, record a pending run and send its job."""
    req = _request(body)
    if thread_id is None:
        thread = runs.new_thread(owner=key.id, metadata={"stateless": True})
    else:
        thread = runs.get_thread(key.id, thread_id)
        if thread is None and body.if_not_exists == "create":
            thread = runs.new_thread(owner=key.id, metadata=None, thread_id=thread_id)
        if thread is None:
            raise HTTPException(404, f"no thread {thread_id!r}")
    why = execution.claim_thread(thread, req.spec.graph_id)
    if why:
        raise HTTPException(409, why)
    run = runs.put_run(
        thread,
        {
            "run_id": str(uuid.uuid4()),
            "thread_id": thread["thread_id"],
            "assistant_id": req.spec.assistant_id,
            "graph_id": req.spec.graph_id,
            "status": "pending",
            "metadata": body.metadata or {},
            "kwargs": {"stream_mode": req.stream_mode, "interrupt_before": req.interrupt_before},
            "request": req.record(),
            "created_at": runs.now(),
            "stateless": thread_id is None and body.on_completion != "keep",
        },
    )
    try:
        run = execution.submit_run(thread, run, send=lambda job: deps.enqueue(job))
    except EnqueueError as exc:
        raise HTTPException(503, str(exc)) from None
    return thread, run


def _location(run: dict[str, Any]) -> str:
    return f"/v1/langgraph/threads/{run['thread_id']}/runs/{run['run_id']}"


def _finish_stateless(thread: dict[str, Any], run: dict[str, Any]) -> None:
    if run.get("stateless"):
        runs.delete_thread(runs.get_thread(thread["owner"], thread["thread_id"]) or thread)


async def _final(thread: dict[str, Any], run: dict[str, Any]) -> Any:
    """What ``/wait`` and ``/join`` answer: the thread's values, or ``{"__error__": ...}`` for a failed run."""
    if run.get("status") == "error":
        return {"__error__": run.get("error")}
    fresh = await run_in_threadpool(runs.get_thread, thread["owner"], thread["thread_id"])
    return (await run_in_threadpool(runs.thread_state, fresh or thread))["values"]


def _sse(thread: dict[str, Any], run: dict[str, Any], *, start: int, on_disconnect: str, stateless: bool):
    """Server-Sent Events of the run: ``metadata`` first, then each recorded ``(mode, chunk)`` (``id`` = its seq)."""

    async def events():
        ended = False
        try:
            yield Event({"run_id": run["run_id"], "attempt": 1}, event="metadata")
            async for seq, mode, chunk in execution.follow(thread, run["run_id"], start=start, timeout_s=MAX_WAIT_S):
                yield Event(chunk, event=mode, id=str(seq))
            ended = True
        finally:
            if not ended and on_disconnect == "cancel":
                await run_in_threadpool(execution.request_cancel, thread, run["run_id"])
            if ended and stateless:
                await run_in_threadpool(_finish_stateless, thread, run)

    response = sse_response(events())
    response.headers["Content-Location"] = _location(run)
    return response


async def _stream_response(thread_id: str | None, body: RunCreate, key):
    """Start the run's job at once, then stream what the worker records: the run goes on if nobody reads.

    A client that disconnects before the end cancels it (``on_disconnect="cancel"``, the default) or
    leaves it running; ``GET .../runs/{run_id}/stream`` joins it again.
    """
    thread, run = await run_in_threadpool(_prepare, thread_id, body, key)
    return _sse(thread, run, start=0, on_disconnect=body.on_disconnect, stateless=True)


async def _wait_response(thread_id: str | None, body: RunCreate, key, response: Response) -> Any:
    thread, run = await run_in_threadpool(_prepare, thread_id, body, key)
    ended = await execution.wait_done(thread, run["run_id"], MAX_WAIT_S)
    out = await _final(thread, ended)
    await run_in_threadpool(_finish_stateless, thread, run)
    response.headers["Content-Location"] = _location(run)
    return out


# --- assistants ------------------------------------------------------------------------------------


@router.post("/assistants/search")
def search_assistants(body: AssistantSearch, _: ApiKeyDep) -> list[dict[str, Any]]:
    specs = [s for s in graphs.graph_specs().values() if body.graph_id in (None, s.graph_id)]
    return [_assistant(s) for s in specs][body.offset : body.offset + body.limit]


@router.get("/assistants/{assistant_id}")
def get_assistant(assistant_id: str, _: ApiKeyDep) -> dict[str, Any]:
    return _assistant(_spec(assistant_id))


@router.get("/assistants/{assistant_id}/schemas")
def get_schemas(assistant_id: str, _: ApiKeyDep) -> dict[str, Any]:
    return graphs.schemas(_spec(assistant_id))


@router.get("/assistants/{assistant_id}/graph")
def get_graph(assistant_id: str, _: ApiKeyDep) -> dict[str, Any]:
    return graphs.jsonable(graphs.load(_spec(assistant_id)).get_graph().to_json())


# --- threads ---------------------------------------------------------------------------------------


@router.post("/threads")
def create_thread(body: ThreadCreate, key: ApiKeyDep) -> dict[str, Any]:
    """A new thread of the calling key (thread ids are per key: another key's ids are neither seen nor taken)."""
    if body.thread_id is not None and (found := runs.get_thread(key.id, body.thread_id)) is not None:
        if body.if_exists == "do_nothing":
            return runs.public_thread(found)
        raise HTTPException(409, f"thread {body.thread_id!r} exists")
    return runs.public_thread(runs.new_thread(owner=key.id, metadata=body.metadata, thread_id=body.thread_id))


@router.post("/threads/search")
def search_threads(body: ThreadSearch, key: ApiKeyDep) -> list[dict[str, Any]]:
    rows = runs.search_threads(
        owner=key.id, metadata=body.metadata, status=body.status, limit=body.limit, offset=body.offset
    )
    return [runs.public_thread(r, values=False) for r in rows]


@router.get("/threads/{thread_id}")
def get_thread(thread_id: str, key: ApiKeyDep) -> dict[str, Any]:
    return runs.public_thread(_thread(thread_id, key))


@router.delete("/threads/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_thread(thread_id: str, key: ApiKeyDep) -> Response:
    record = _thread(thread_id, key)
    if record.get("status") == "busy" and execution.live_run(record) is not None:
        raise HTTPException(409, f"thread {thread_id} is busy; cancel its run first")
    runs.delete_thread(runs.get_thread(key.id, thread_id) or record)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/threads/{thread_id}/state")
def get_state(thread_id: str, key: ApiKeyDep) -> dict[str, Any]:
    return runs.thread_state(_thread(thread_id, key))


@router.get("/threads/{thread_id}/state/{checkpoint_id}")
def get_state_at(thread_id: str, checkpoint_id: str, key: ApiKeyDep) -> dict[str, Any]:
    if len(checkpoint_id) > 100:
        raise HTTPException(404, "no such checkpoint")
    return runs.thread_state(_thread(thread_id, key), checkpoint_id=checkpoint_id)


@router.post("/threads/{thread_id}/history")
def get_history(thread_id: str, body: HistoryRequest, key: ApiKeyDep) -> list[dict[str, Any]]:
    return runs.thread_history(_thread(thread_id, key), limit=body.limit)


# --- runs ------------------------------------------------------------------------------------------


@router.post("/threads/{thread_id}/runs/stream")
async def stream_run(thread_id: str, body: RunCreate, key: ApiKeyDep):
    """Run the graph on the thread (a job on the workers), streaming its chunks as Server-Sent Events."""
    return await _stream_response(thread_id, body, key)


@router.post("/runs/stream")
async def stream_stateless_run(body: RunCreate, key: ApiKeyDep):
    """A run on a fresh thread, deleted at the end unless ``on_completion`` is ``keep``."""
    return await _stream_response(None, body, key)


@router.post("/threads/{thread_id}/runs/wait")
async def wait_run(thread_id: str, body: RunCreate, key: ApiKeyDep, response: Response) -> Any:
    """Run the graph and answer with the thread's final values (``{"__error__": ...}`` if it failed)."""
    return await _wait_response(thread_id, body, key, response)


@router.post("/runs/wait")
async def wait_stateless_run(body: RunCreate, key: ApiKeyDep, response: Response) -> Any:
    return await _wait_response(None, body, key, response)


@router.post("/threads/{thread_id}/runs")
def create_run(thread_id: str, body: RunCreate, key: ApiKeyDep, response: Response) -> dict[str, Any]:
    """Start a background run (a job on the workers); follow it with ``GET .../runs/{run_id}``, ``/join`` or
    ``/stream``, from any API process, after a restart too."""
    _, run = _prepare(thread_id, body, key)
    response.headers["Content-Location"] = _location(run)
    return runs.public_run(run)


@router.get("/threads/{thread_id}/runs")
def list_runs(
    thread_id: str,
    key: ApiKeyDep,
    limit: int = Query(10, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=1_000_000),
) -> list[dict[str, Any]]:
    thread = _thread(thread_id, key)
    rows = runs.list_runs(thread, limit=limit, offset=offset)
    return [runs.public_run(execution.current(thread, r["run_id"]) or r) for r in rows]


def _run(thread_id: str, run_id: str, key) -> tuple[dict[str, Any], dict[str, Any]]:
    thread = _thread(thread_id, key)
    run = execution.current(thread, run_id) if len(run_id) <= 100 else None
    if run is None:
        raise HTTPException(404, f"no run {run_id!r} on thread {thread_id!r}")
    return thread, run


@router.get("/threads/{thread_id}/runs/{run_id}")
def get_run(thread_id: str, run_id: str, key: ApiKeyDep) -> dict[str, Any]:
    return runs.public_run(_run(thread_id, run_id, key)[1])


@router.get("/threads/{thread_id}/runs/{run_id}/join")
async def join_run(thread_id: str, run_id: str, key: ApiKeyDep) -> Any:
    """Wait for the run to end; the thread's values then (``{"__error__": ...}`` if it failed)."""
    thread, _ = await run_in_threadpool(_run, thread_id, run_id, key)
    run = await execution.wait_done(thread, run_id, MAX_WAIT_S)
    return await _final(thread, run)


@router.get("/threads/{thread_id}/runs/{run_id}/stream")
async def join_run_stream(
    thread_id: str,
    run_id: str,
    key: ApiKeyDep,
    last_event_id: Annotated[str | None, Header(max_length=20, description="Resume after this event.")] = None,
    cancel_on_disconnect: bool = Query(False, description="Cancel the run if this stream is closed before its end."),
):
    """Join a run's event stream: every chunk it recorded (after ``Last-Event-ID``), then the rest as it runs.

    A client that lost its stream (its connection, or the API process) reconnects here and reads to the end.
    """
    thread, run = await run_in_threadpool(_run, thread_id, run_id, key)
    start = int(last_event_id) + 1 if last_event_id and last_event_id.isdigit() else 0
    return _sse(
        thread, run, start=start, on_disconnect="cancel" if cancel_on_disconnect else "continue", stateless=False
    )


@router.post("/threads/{thread_id}/runs/{run_id}/cancel")
async def cancel_run(
    thread_id: str,
    run_id: str,
    key: ApiKeyDep,
    wait: bool = Query(False, description="Answer once the run has stopped."),
    action: Literal["interrupt"] = Query("interrupt", description="Stop between steps, keeping the checkpoint."),
) -> Response:
    thread, _ = await run_in_threadpool(_run, thread_id, run_id, key)
    live = await run_in_threadpool(execution.request_cancel, thread, run_id)
    if not live:
        raise HTTPException(409, f"run {run_id} has already ended")
    if wait:
        await execution.wait_done(thread, run_id, 60.0)
    return Response(
        json.dumps({"run_id": run_id, "cancelled": True}),
        status_code=status.HTTP_200_OK if wait else status.HTTP_202_ACCEPTED,
        media_type="application/json",
    )
