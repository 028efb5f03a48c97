"""``paperworks up``: API + one worker + the web UI on the embedded defaults, as child processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from core.config import get_settings
from services.cli.progress import console

UI_APP = Path(__file__).resolve().parents[2] / "ui" / "app.py"


def streamlit_command(port: int | None = None, host: str | None = None) -> list[str]:
    s = get_settings()
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(UI_APP),
        "--server.headless",
        "true",
        "--server.port",
        str(port or s.ui_port),
        "--server.address",
        host or s.api_host,
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]


def _wait_http(url: str, timeout: float, procs: list[subprocess.Popen]) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            return False
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    return False


def up(*, with_ui: bool = True, api_port: int | None = None, ui_port: int | None = None) -> int:
    from core.db import crud, migrate
    from core.db.session import session_scope

    s = get_settings()
    migrate.upgrade()
    api_port = api_port or s.api_port
    ui_port = ui_port or s.ui_port
    # a key for the UI's own calls, valid while `up` runs
    with session_scope() as db:
        key_row, ui_key = crud.create_api_key(db, name="ui-session")
    env = dict(
        os.environ,
        PAPERWORKS_API_KEY=ui_key,
        PAPERWORKS_API_URL=f"http://{s.api_host}:{api_port}",
        PAPERWORKS_API_PORT=str(api_port),
        PAPERWORKS_UI_PORT=str(ui_port),
        PAPERWORKS_HOME=str(s.home),
        PYTHONUNBUFFERED="1",
    )
    logs = s.home / "logs"
    logs.mkdir(exist_ok=True)
    specs = [
        (
            "api",
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "services.api.main:create_app",
                "--host",
                s.api_host,
                "--port",
                str(api_port),
            ],
        ),
        ("worker", [sys.executable, "-m", "services.worker.main", "--pool=solo"]),
    ]
    if with_ui:
        specs.append(("ui", streamlit_command(ui_port)))
    procs: list[subprocess.Popen] = []
    try:
        for name, cmd in specs:
            fh = open(logs / f"{name}.log", "ab")
            procs.append(subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True))
        api_url = f"http://{s.api_host}:{api_port}"
        if not _wait_http(f"{api_url}/healthz", 60, procs):
            console.print(f"[red]the API did not start; see {logs / 'api.log'}[/red]")
            return 1
        console.print(f"API      {api_url}   (docs: {api_url}/docs)")
        if with_ui:
            ui_url = f"http://{s.api_host}:{ui_port}"
            if _wait_http(ui_url, 60, procs):
                console.print(f"Web UI   {ui_url}")
            else:
                console.print(f"[yellow]the UI is not up yet; see {logs / 'ui.log'}[/yellow]")
        console.print(f"worker   queues {','.join(s.queues)}; logs in {logs}")
        console.print("create a key for your own API calls with `paperworks keys create`; Ctrl-C stops everything")
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        dead = [name for (name, _), p in zip(specs, procs) if p.poll() is not None]
        console.print(f"[red]{', '.join(dead)} exited; stopping[/red]")
        return 1
    except KeyboardInterrupt:
        console.print("stopping…")
        return 0
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        with session_scope() as db:
            crud.revoke_api_key(db, key_id=key_row.id)
