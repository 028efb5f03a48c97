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
  ``.../runs/wait``, ``GET .../runs[/{run_id}[/join]]``, ``POST .../runs/{run_id}/cancel``, and the
  thread-less ``POST /runs/stream`` / ``POST /runs/wait``.

Interrupts: ``interrupt_before`` / ``interrupt_after`` (node names or ``"*"``) stop a run before or
after those nodes; the thread is then ``interrupted`` and a new run with ``input: null`` (or
``command: {"resume": ...}`` for a graph that calls ``interrupt()``) continues it.

Why our own routes and not LangGraph's server: ``langgraph dev`` (``langgraph-cli[inmem]``) does run
offline on our ``langgraph.json``, but keeps threads in memory, authenticates nobody unless given a
custom auth module, passes a run's ``context`` to the graph without validating its nested config,
and its production runtime needs a license key; here the API's keys, owners and checkpointer apply.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status
from starlette.concurrency import run_in_threadpool

from services.api import agent_runs as runs
from services.api import graphs
from services.api.agent_bodies import AssistantSearch, HistoryRequest, RunCreate, ThreadCreate, ThreadSearch
from services.api.deps import ApiKeyDep, may_access, owner_filter
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
    record = runs.get_thread(thread_id) if len(thread_id) <= 100 else None
    if record is None or not may_access(key, record.get("owner")):
        raise HTTPException(404, f"no thread {thread_id!r}")
    return record


def _modes(stream_mode: str | list[str]) -> list[str]:
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    bad = [m for m in modes if m not in STREAM_MODES]
    if bad or not modes:
        raise HTTPException(422, f"unsupported stream_mode {bad or modes}; supported: {', '.join(STREAM_MODES)}")
    return list(dict.fromkeys(modes))


def _request(body: RunCreate) -> runs.RunRequest:
    spec = _spec(body.assistant_id)
    known = set(graphs.nodes(spec))
    for name in ("interrupt_before", "interrupt_after"):
        value = getattr(body, name)
        if isinstance(value, list) and not set(value) <= known:
            raise HTTPException(422, f"{name}: unknown nodes {sorted(set(value) - known)}; nodes: {sorted(known)}")
    if body.input is not None and body.command is not None:
        raise HTTPException(422, "send input or command, not both")
    try:
        context = graphs.context_for(spec, body.context)
    except ValueError as exc:
        raise HTTPException(422, f"context: {exc}") from None
    checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    checkpoint_id = checkpoint_id or ((body.config.configurable or {}).get("checkpoint_id") if body.config else None)
    return runs.RunRequest(
        spec=spec,
        input=body.input,
        command=body.command.model_dump(exclude_none=True) if body.command else None,
        context=context,
        stream_mode=_modes(body.stream_mode),
        interrupt_before=body.interrupt_before,
        interrupt_after=body.interrupt_after,
        checkpoint_id=str(checkpoint_id) if checkpoint_id else None,
        recursion_limit=body.config.recursion_limit if body.config else 100,
    )


def _prepare(thread_id: str | None, body: RunCreate, key) -> tuple[dict[str, Any], runs.RunRequest]:
    """Validate, find (or create) the thread, claim it and record a pending run."""
    req = _request(body)
    if thread_id is None:
        thread = runs.new_thread(owner=key.id, metadata={"stateless": True})
    else:
        thread = runs.get_thread(thread_id)
        if thread is None and body.if_not_exists == "create":
            thread = runs.new_thread(owner=key.id, metadata=None, thread_id=thread_id)
        if thread is None or not may_access(key, thread.get("owner")):
            raise HTTPException(404, f"no thread {thread_id!r}")
    why = runs.claim_thread(thread["thread_id"], req.spec.graph_id)
    if why:
        raise HTTPException(409, why)
    run = runs.put_run(
        {
            "run_id": str(uuid.uuid4()),
            "thread_id": thread["thread_id"],
            "assistant_id": req.spec.assistant_id,
            "graph_id": req.spec.graph_id,
            "owner": key.id,
            "process": runs.process_name(),
            "status": "pending",
            "metadata": body.metadata or {},
            "kwargs": {"stream_mode": req.stream_mode, "interrupt_before": req.interrupt_before},
            "created_at": runs.now(),
            "stateless": thread_id is None and body.on_completion != "keep",
        }
    )
    return run, req


def _location(run: dict[str, Any]) -> str:
    return f"/v1/langgraph/threads/{run['thread_id']}/runs/{run['run_id']}"


def _finish_stateless(run: dict[str, Any]) -> None:
    if run.get("stateless"):
        runs.delete_thread(run["thread_id"])


def _final(result: dict[str, Any]) -> Any:
    run = result["run"]
    if run["status"] == "error":
        return {"__error__": run.get("error")}
    return result["values"] if result["values"] is not None else {}


async def _wait_done(thread_id: str, run_id: str, timeout_s: float) -> dict[str, Any]:
    """Wait for a run to end (an in-process event, else polling its record); returns its record."""
    active = runs.ACTIVE.get(run_id)
    if active is not None:
        await run_in_threadpool(active.done.wait, timeout_s)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        run = await run_in_threadpool(runs.get_run, thread_id, run_id)
        if run is None or run["status"] not in runs.RUN_STATUSES_LIVE or loop.time() >= deadline:
            return run or {}
        await asyncio.sleep(0.1)


async def _stream_response(thread_id: str | None, body: RunCreate, key):
    """Start the run at once, then stream it: ``metadata`` first, then ``(mode, chunk)`` as the graph emits them.

    The run starts before the response does, so it runs even if nobody reads the stream; a client that
    disconnects before the end cancels it (``on_disconnect="cancel"``, the default) or leaves it running.
    """
    run, req = await run_in_threadpool(_prepare, thread_id, body, key)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def put(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop closed: nobody is listening any more
            pass

    active = runs.start(run, req, lambda mode, chunk: put((mode, chunk)), on_end=lambda result: put(None))

    async def events():
        ended = False
        try:
            yield Event({"run_id": run["run_id"], "attempt": 1}, event="metadata")
            while (item := await queue.get()) is not None:
                yield Event(item[1], event=item[0])
            ended = True
        finally:
            if not ended and body.on_disconnect == "cancel":
                active.cancel.set()
            if ended:
                await run_in_threadpool(_finish_stateless, run)

    response = sse_response(events())
    response.headers["Content-Location"] = _location(run)
    return response


async def _wait_response(thread_id: str | None, body: RunCreate, key, response: Response) -> Any:
    run, req = await run_in_threadpool(_prepare, thread_id, body, key)
    done: asyncio.Future = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    runs.start(run, req, lambda mode, chunk: None, on_end=lambda r: loop.call_soon_threadsafe(done.set_result, r))
    result = await done
    await run_in_threadpool(_finish_stateless, run)
    response.headers["Content-Location"] = _location(run)
    return _final(result)


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
    if body.thread_id is not None and (found := runs.get_thread(body.thread_id)) is not None:
        if body.if_exists == "do_nothing" and may_access(key, found.get("owner")):
            return runs.public_thread(found)
        raise HTTPException(409, f"thread {body.thread_id!r} exists")
    return runs.public_thread(runs.new_thread(owner=key.id, metadata=body.metadata, thread_id=body.thread_id))


@router.post("/threads/search")
def search_threads(body: ThreadSearch, key: ApiKeyDep) -> list[dict[str, Any]]:
    rows = runs.search_threads(
        owner=owner_filter(key), metadata=body.metadata, status=body.status, limit=body.limit, offset=body.offset
    )
    return [runs.public_thread(r, values=False) for r in rows]


@router.get("/threads/{thread_id}")
def get_thread(thread_id: str, key: ApiKeyDep) -> dict[str, Any]:
    return runs.public_thread(_thread(thread_id, key))


@router.delete("/threads/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_thread(thread_id: str, key: ApiKeyDep) -> Response:
    record = _thread(thread_id, key)
    if record.get("status") == "busy":
        raise HTTPException(409, f"thread {thread_id} is busy; cancel its run first")
    runs.delete_thread(thread_id)
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
    """Run the graph on the thread, streaming its chunks as Server-Sent Events."""
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
    """Start a background run; follow it with ``GET .../runs/{run_id}`` or ``.../join``."""
    run, req = _prepare(thread_id, body, key)
    runs.start(run, req, lambda mode, chunk: None)
    response.headers["Content-Location"] = _location(run)
    return runs.public_run(run)


@router.get("/threads/{thread_id}/runs")
def list_runs(
    thread_id: str,
    key: ApiKeyDep,
    limit: int = Query(10, ge=1, le=1000),
    offset: int = Query(0, ge=0, le=1_000_000),
) -> list[dict[str, Any]]:
    _thread(thread_id, key)
    return [runs.public_run(r) for r in runs.list_runs(thread_id, limit=limit, offset=offset)]


def _run(thread_id: str, run_id: str, key) -> dict[str, Any]:
    _thread(thread_id, key)
    run = runs.get_run(thread_id, run_id) if len(run_id) <= 100 else None
    if run is None:
        raise HTTPException(404, f"no run {run_id!r} on thread {thread_id!r}")
    return run


@router.get("/threads/{thread_id}/runs/{run_id}")
def get_run(thread_id: str, run_id: str, key: ApiKeyDep) -> dict[str, Any]:
    return runs.public_run(_run(thread_id, run_id, key))


@router.get("/threads/{thread_id}/runs/{run_id}/join")
async def join_run(thread_id: str, run_id: str, key: ApiKeyDep) -> Any:
    """Wait for the run to end; the thread's values then (``{"__error__": ...}`` if it failed)."""
    await run_in_threadpool(_run, thread_id, run_id, key)
    run = await _wait_done(thread_id, run_id, MAX_WAIT_S)
    if run.get("status") == "error":
        return {"__error__": run.get("error")}
    record = await run_in_threadpool(_thread, thread_id, key)
    return (await run_in_threadpool(runs.thread_state, record))["values"]


@router.post("/threads/{thread_id}/runs/{run_id}/cancel")
async def cancel_run(
    thread_id: str,
    run_id: str,
    key: ApiKeyDep,
    wait: bool = Query(False, description="Answer once the run has stopped."),
    action: Literal["interrupt"] = Query("interrupt", description="Stop between steps, keeping the checkpoint."),
) -> Response:
    await run_in_threadpool(_run, thread_id, run_id, key)
    live = await run_in_threadpool(runs.request_cancel, thread_id, run_id)
    if not live:
        raise HTTPException(409, f"run {run_id} has already ended")
    if wait:
        await _wait_done(thread_id, run_id, 60.0)
    return Response(
        json.dumps({"run_id": run_id, "cancelled": True}),
        status_code=status.HTTP_200_OK if wait else status.HTTP_202_ACCEPTED,
        media_type="application/json",
    )
