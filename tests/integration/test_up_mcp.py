"""``paperworks up --mcp`` and the compose ``mcp`` profile serve MCP over streamable HTTP (issue #48 part 2).

``up --mcp`` starts the MCP endpoint beside the API and the worker; a tool call with a key runs as a job on
the worker (``--dispatch queue``) and belongs to that key; a request without a key is a 401.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def test_compose_has_an_mcp_profile_serving_streamable_http_to_the_workers():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    mcp = compose["services"]["mcp"]
    assert mcp["profiles"] == ["mcp"]  # off unless asked for: `docker compose --profile mcp up`
    cmd = mcp["command"]
    assert cmd[:2] == ["paperworks", "mcp"]
    assert cmd[cmd.index("--transport") + 1] == "http" and cmd[cmd.index("--dispatch") + 1] == "queue"
    assert mcp["ports"] == [f"{cmd[cmd.index('--port') + 1]}:8100"]
    assert mcp["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert mcp["environment"]["PAPERWORKS_DATABASE_URL"].startswith("postgresql")  # the app's shared settings


@pytest.mark.integration
def test_paperworks_up_mcp_serves_tools_that_run_on_the_worker(tmp_path):
    from core.devstack import free_port

    home = tmp_path / "home"
    env = dict(os.environ, PAPERWORKS_HOME=str(home), PYTHONUNBUFFERED="1")
    env.pop("PAPERWORKS_DATABASE_URL", None)
    env.pop("PAPERWORKS_BROKER_URL", None)
    log = tmp_path / "up.log"
    api_port, mcp_port = free_port(), free_port()
    cmd = [sys.executable, "-m", "services.cli.main", "up", "--no-ui", "--mcp"]
    cmd += ["--api-port", str(api_port), "--mcp-port", str(mcp_port)]
    proc = subprocess.Popen(cmd, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while "Ctrl-C stops everything" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        url = f"http://127.0.0.1:{mcp_port}/mcp"
        assert f"MCP      {url}" in log.read_text()
        assert httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
        key_out = subprocess.run(
            [sys.executable, "-m", "services.cli.main", "keys", "create", "--name", "mcp-client"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        key = key_out.stdout.strip().splitlines()[-1]
        job = anyio.run(_call_tool, url, key)
        assert job["status"] == "succeeded", job
        worker_log = (home / "logs" / "worker.log").read_text()
        assert f"job-{job['job_id']}" in worker_log  # run by the worker, not by the MCP process
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


async def _call_tool(url: str, key: str) -> dict:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=120))
    async with client, streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            res = await session.call_tool("diag.sleep", {"seconds": 0.2, "steps": 2})
            assert not res.is_error, res.content
            return res.structured_content
