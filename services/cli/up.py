"""``paperworks up``: API + one worker + the web UI on the embedded defaults, supervised.

``--mcp`` also serves the MCP streamable-HTTP endpoint (``http://HOST:8100/mcp``, every request with an
API key; jobs go to the worker, as from the API), and ``--no-ui`` leaves the UI out.

* Every child runs in its own process group (so a terminal's Ctrl-C reaches only ``up``, which
  then stops each group whole: a child's own children go too) and gets SIGTERM from the kernel
  if ``up`` itself dies (``setpriv --pdeathsig``), so nothing is left orphaned.
* Ctrl-C (SIGINT), SIGTERM or SIGHUP: every group gets SIGTERM at once; whatever is still alive
  after ``grace_s`` seconds (a worker finishing its job: its message is redelivered) gets SIGKILL.
  Another Ctrl-C while stopping skips the rest of the grace period; it never aborts the cleanup.
* A child that exits while ``up`` runs is restarted with exponential backoff (1 s, 2 s, … 30 s;
  reset once it has run for a minute): a dead worker does not take the API and UI down.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from core.config import get_settings
from services.cli.progress import console

UI_APP = Path(__file__).resolve().parents[2] / "ui" / "app.py"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
KILL_WAIT_S = 5.0  # how long stop_all waits for SIGKILLed groups to disappear
log = logging.getLogger(__name__)


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


def _with_parent_death_signal(cmd: list[str]) -> list[str]:
    """``cmd`` run so the kernel sends it SIGTERM when ``up`` dies (util-linux ``setpriv --pdeathsig``).

    (A ``preexec_fn`` calling prctl could deadlock after fork in a process with threads.)
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *cmd] if setpriv and sys.platform.startswith("linux") else cmd


@dataclass
class Child:
    """One supervised process: its command, log file, current process and restart bookkeeping."""

    name: str
    cmd: list[str]
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen | None = None
    started: float = 0.0
    failures: int = 0
    restart_at: float | None = None
    restarts: int = field(default=0)

    def start(self) -> None:
        fh = open(self.log, "ab")
        try:
            self.proc = subprocess.Popen(
                _with_parent_death_signal(self.cmd),
                env=self.env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                process_group=0,
            )
        finally:
            fh.close()
        self.started, self.restart_at = time.monotonic(), None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def group_alive(self) -> bool:
        """Whether anything of this child's process group is left running (the child, or a child of it)."""
        if self.proc is None:
            return False
        self.proc.poll()  # reap the leader if it exited
        return bool(group_members(self.proc.pid))


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``: from /proc on Linux, else ``killpg(pgid, 0)``."""
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - not Linux
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    found = []
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(int(d.name))
    return found


class Supervisor:
    """Starts children, restarts the ones that die (with backoff), and stops them all on a signal."""

    def __init__(
        self, children: list[Child], *, grace_s: float = 3.0, backoff_s: float = 1.0, max_backoff_s: float = 30.0
    ) -> None:
        self.children = children
        self.grace_s = grace_s
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.signals = 0
        self._first_signal = ""
        self._announced = 0
        self._old: dict[int, object] = {}

    # --- signals -------------------------------------------------------------------
    def _on_signal(self, signum, _frame) -> None:
        """Only counts: a handler that prints can interrupt a print (or the import rich does in its first one)
        and raise from inside it; :meth:`announce` prints from the main loop instead."""
        self.signals += 1
        if self.signals == 1:
            self._first_signal = signal.Signals(signum).name

    def announce(self) -> None:
        """Say what the signals received so far asked for, once each."""
        if self.signals >= 1 and self._announced < 1:
            self._announced = 1
            console.print(f"stopping… ({self._first_signal}; again to skip the {self.grace_s:.0f} s grace)")
        if self.signals >= 2 and self._announced < 2:
            self._announced = 2
            console.print("stopping now")

    def install_handlers(self) -> None:
        for sig in STOP_SIGNALS:
            self._old[sig] = signal.signal(sig, self._on_signal)

    def restore_handlers(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def release_handlers(self) -> None:
        """Restore the old handlers, unless a signal is stopping us: then the process is about to exit, and the
        stop signals are ignored from here on. Neither the old handler nor ours will do: an impatient second
        Ctrl-C arriving after the cleanup would meet Python's default handler (KeyboardInterrupt, exit -SIGINT
        instead of 0), and ours does not survive the exit itself — interpreter finalization resets every signal
        with a Python handler to SIG_DFL, so a Ctrl-C in that window kills the process with -SIGINT (seen in CI).
        SIG_IGN is left as it is by finalization, and there is nothing left to stop."""
        if not self.stopping:
            self.restore_handlers()
            return
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    @property
    def stopping(self) -> bool:
        return self.signals > 0

    # --- supervision -----------------------------------------------------------------
    def start_all(self) -> None:
        for c in self.children:
            c.start()

    def check(self) -> list[str]:
        """Restart the children that died (after their backoff); returns what happened, for the console."""
        events = []
        now = time.monotonic()
        for c in self.children:
            if c.alive or self.stopping:
                continue
            if c.restart_at is None:
                code = c.proc.returncode if c.proc is not None else None
                c.signal_group(signal.SIGKILL)  # whatever the dead child left behind
                c.failures = 0 if now - c.started > 60 else c.failures + 1
                delay = min(self.max_backoff_s, self.backoff_s * 2.0 ** max(0, c.failures - 1))
                c.restart_at = now + delay
                events.append(f"{c.name} exited (code {code}); restarting in {delay:g} s (log: {c.log})")
            elif now >= c.restart_at:
                c.start()
                c.restarts += 1
                events.append(f"{c.name} restarted (pid {c.proc.pid})")
        return events

    def sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))

    def stop_all(self) -> float:
        """SIGTERM to every group at once, SIGKILL after the grace period (or a second signal); returns seconds."""
        t0 = time.monotonic()
        self.announce()
        for c in self.children:
            c.signal_group(signal.SIGTERM)
        deadline = t0 + self.grace_s
        killed_at: float | None = None
        while any(c.group_alive() for c in self.children):
            self.announce()
            now = time.monotonic()
            if killed_at is None and (now >= deadline or self.signals >= 2):
                killed_at = now
            if killed_at is not None:
                if now - killed_at > KILL_WAIT_S:  # pragma: no cover - a process stuck in the kernel
                    log.warning("processes still alive %.0f s after SIGKILL", KILL_WAIT_S)
                    break
                # SIGKILL is delivered asynchronously: wait until the groups are really gone (a child's own
                # children included), sending it again to anything still there
                for c in self.children:
                    if c.group_alive():
                        c.signal_group(signal.SIGKILL)
            time.sleep(0.02 if killed_at is not None else 0.05)
        for c in self.children:
            if c.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    c.proc.wait(timeout=2)
        return time.monotonic() - t0


MCP_PORT = 8100


def mcp_command(host: str, port: int = MCP_PORT) -> list[str]:
    """``paperworks mcp`` over streamable HTTP, sending its jobs to the workers (``--dispatch queue``)."""
    return [
        sys.executable,
        "-m",
        "services.cli.main",
        "mcp",
        "--transport",
        "http",
        "--host",
        host,
        "--port",
        str(port),
        "--dispatch",
        "queue",
    ]


def _wait_http(url: str, timeout: float, sup: Supervisor, child: Child) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not sup.stopping:
        if not child.alive:
            return False
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return False


def up(
    *,
    with_ui: bool = True,
    with_mcp: bool = False,
    api_port: int | None = None,
    ui_port: int | None = None,
    mcp_port: int = MCP_PORT,
    grace_s: float = 3.0,
) -> int:
    from core.db import crud, migrate
    from core.db.session import session_scope

    s = get_settings()
    migrate.upgrade()
    api_port = api_port or s.api_port
    ui_port = ui_port or s.ui_port
    # a key for the UI's own calls, valid while `up` runs. Admin scope: the local UI (loopback, the operator's)
    # keeps showing the jobs of earlier sessions and of the CLI, which belong to other keys (docs/SECURITY.md)
    with session_scope() as db:
        key_row, ui_key = crud.create_api_key(db, name="ui-session", scopes="admin")
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
    api_cmd = [sys.executable, "-m", "uvicorn", "--factory", "services.api.main:create_app"]
    api_cmd += ["--host", s.api_host, "--port", str(api_port), "--timeout-graceful-shutdown", "1"]
    children = [
        Child("api", api_cmd, env, logs / "api.log"),
        Child("worker", [sys.executable, "-m", "services.worker.main", "--pool=solo"], env, logs / "worker.log"),
    ]
    if with_ui:
        children.append(Child("ui", streamlit_command(ui_port), env, logs / "ui.log"))
    if with_mcp:
        children.append(Child("mcp", mcp_command(s.api_host, mcp_port), env, logs / "mcp.log"))
    sup = Supervisor(children, grace_s=grace_s)
    sup.install_handlers()
    code = 0
    try:
        sup.start_all()
        api_url = f"http://{s.api_host}:{api_port}"
        if not _wait_http(f"{api_url}/healthz", 60, sup, children[0]):
            if not sup.stopping:
                console.print(f"[red]the API did not start; see {children[0].log}[/red]")
                code = 1
            return code
        console.print(f"API      {api_url}   (docs: {api_url}/docs)")
        if with_ui:
            ui = next(c for c in children if c.name == "ui")
            ui_url = f"http://{s.api_host}:{ui_port}"
            if _wait_http(ui_url, 60, sup, ui):
                console.print(f"Web UI   {ui_url}")
            elif not sup.stopping:
                console.print(f"[yellow]the UI is not up yet; see {ui.log}[/yellow]")
        if with_mcp:
            mcp = next(c for c in children if c.name == "mcp")
            mcp_url = f"http://{s.api_host}:{mcp_port}/mcp"
            if _wait_http(mcp_url, 60, sup, mcp):  # a 401 without a key: it is up
                console.print(f"MCP      {mcp_url}   (streamable HTTP; send an API key)")
            elif not sup.stopping:
                console.print(f"[yellow]the MCP server is not up yet; see {mcp.log}[/yellow]")
        console.print(f"worker   queues {','.join(s.queues)}; logs in {logs}")
        console.print(
            "try one: `paperworks examples`; a key for your own API calls: `paperworks keys create`; "
            "Ctrl-C stops everything"
        )
        while not sup.stopping:
            for line in sup.check():
                console.print(f"[yellow]{line}[/yellow]")
            sup.sleep(0.5)
        return code
    finally:
        took = sup.stop_all()
        console.print(f"stopped in {took:.1f} s")
        with contextlib.suppress(Exception), session_scope() as db:
            crud.revoke_api_key(db, key_id=key_row.id)
        sup.release_handlers()
