"""A real MCP client session (the SDK's ``ClientSession``) against ``paperworks mcp`` over stdio and over HTTP.

Both transports run the same scenario: list the tools (one per registered method, with the params
schema), call ``llm.complete`` and ``defame.check`` with a scripted model, read the report resource,
and cancel a long ``diag.sleep`` job through MCP cancellation (the job ends ``cancelled``).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def _load_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mcp_test_scripted", HERE / "scripted.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_script = _load_script()
MODEL, install = _script.MODEL, _script.install


def _job_status(job_id: str) -> str:
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        return crud.get_job(s, job_id=job_id).status


def _latest_job(method: str) -> str:
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        return crud.list_jobs(s, method=method, limit=1)[0].id


async def scenario(session) -> dict:
    """The checks shared by both transports; returns what the caller may check further."""
    from core.jobs import list_methods

    await session.initialize()
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {m.name for m in list_methods()}
    assert tools["llm.complete"].input_schema["properties"]["prompts"]["type"] == "array"
    assert "claim" in tools["defame.check"].input_schema["required"]

    progress: list[tuple[float, str | None]] = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    res = await session.call_tool(
        "llm.complete", {"prompts": ["Say hi to the MCP client"], "model": MODEL}, progress_callback=on_progress
    )
    assert not res.is_error, res.content
    assert "echo: Say hi to the MCP client" in res.content[0].text
    job_id = res.structured_content["job_id"]
    assert res.structured_content["metrics"]["prompts"] == 1 and _job_status(job_id) == "succeeded"
    assert progress and progress[-1][0] == 1.0 and all(a < b for (a, _), (b, _) in zip(progress, progress[1:]))
    report = await session.read_resource(res.structured_content["report"])
    assert report.contents[0].mime_type == "text/markdown" and "echo: Say hi" in report.contents[0].text
    listed = {str(r.uri) for r in (await session.list_resources()).resources}
    assert res.structured_content["report"] in listed

    bad = await session.call_tool("llm.complete", {"prompts": []})
    assert bad.is_error and "prompts" in bad.content[0].text

    fc = await session.call_tool(
        "defame.check", {"claim": "The Golden Gate Bridge opened in 1952.", "model": MODEL, "max_iterations": 1}
    )
    assert not fc.is_error, fc.content
    assert fc.structured_content["metrics"]["verdict"] == "refuted"
    assert "REFUTED" in fc.content[0].text and "opened in 1937" in fc.content[0].text

    started = anyio.Event()

    async def on_sleep_progress(value, total, message):
        started.set()

    with anyio.move_on_after(30):
        async with anyio.create_task_group() as tg:

            async def long_call():
                await session.call_tool(
                    "diag.sleep", {"seconds": 120, "steps": 1200}, progress_callback=on_sleep_progress
                )

            tg.start_soon(long_call)
            await started.wait()
            tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the abandoned request
    assert started.is_set(), "diag.sleep never reported progress"
    sleep_id = _latest_job("diag.sleep")
    for _ in range(100):
        if _job_status(sleep_id) == "cancelled":
            break
        await anyio.sleep(0.1)
    assert _job_status(sleep_id) == "cancelled"
    state = await session.read_resource(f"paperworks://jobs/{sleep_id}")
    assert '"status": "cancelled"' in state.contents[0].text
    return {"job_id": job_id}


def test_stdio_session():
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "stdio_server.py")], env=dict(os.environ), cwd=str(REPO)
    )

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await scenario(session)

    anyio.run(main)


@pytest.fixture
def http_server():
    """``services.mcp.transports.http_app`` under uvicorn in a thread; yields its /mcp URL."""
    import uvicorn

    from services.mcp.transports import http_app

    install()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(http_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)


def test_http_session_needs_an_api_key(http_server):
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx.post(http_server, json=hello).status_code == 401
    r = httpx.post(http_server, json=hello, headers={"Authorization": "Bearer pw_not-a-key"})
    assert r.status_code == 401 and r.json()["detail"] == "invalid or revoked API key"


def test_http_session(http_server, api_key):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from core.db import crud
    from core.db.session import session_scope

    async def main():
        client = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {api_key}"}, timeout=httpx2.Timeout(30, read=120)
        )
        async with client, streamable_http_client(http_server, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                return await scenario(session)

    out = anyio.run(main)
    with session_scope() as s:  # the job belongs to the key that called the tool
        owner = crud.get_job(s, job_id=out["job_id"]).owner
        assert owner == crud.verify_api_key(s, key=api_key).id


def test_http_resources_belong_to_their_key(http_server, api_key):
    """Another key neither lists nor reads the first key's report."""
    import httpx2
    from mcp import ClientSession, MCPError
    from mcp.client.streamable_http import streamable_http_client

    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        _, other = crud.create_api_key(s, name="other")

    async def session_for(key, fn):
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
        async with client, streamable_http_client(http_server, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await fn(session)

    async def call(session):
        res = await session.call_tool("diag.sleep", {"seconds": 0, "steps": 1})
        assert not res.is_error
        return res.structured_content["report"]

    async def peek(session, uri):
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        with pytest.raises(MCPError, match="no job"):
            await session.read_resource(uri)
        return listed

    async def main():
        uri = await session_for(api_key, call)
        assert uri not in await session_for(other, lambda s: peek(s, uri))

    anyio.run(main)
