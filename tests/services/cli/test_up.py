"""`paperworks up`'s supervisor: restarts with backoff, stops every process group fast, leaves no orphans."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from services.cli.up import Child, Supervisor

# a child that ignores SIGTERM and has a child of its own (in its process group)
STUBBORN = (
    "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print('ready', flush=True); "
    "time.sleep(60)"
)


def _child(tmp_path: Path, name: str, code: str) -> Child:
    return Child(name, [sys.executable, "-c", code], dict(os.environ), tmp_path / f"{name}.log")


def _group_pids(c: Child) -> list[int]:
    return [p.pid for p in psutil.process_iter(["pid"]) if _pgid(p.pid) == c.proc.pid]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _wait_log(c: Child, needle: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while needle not in (c.log.read_text() if c.log.exists() else ""):
        assert time.monotonic() < deadline, f"{c.name} never printed {needle!r}"
        time.sleep(0.05)


def test_stop_kills_every_group_after_the_grace_period(tmp_path):
    quick = _child(tmp_path, "quick", "import time; print('ready', flush=True); time.sleep(60)")
    stubborn = _child(tmp_path, "stubborn", STUBBORN)
    sup = Supervisor([quick, stubborn], grace_s=0.5)
    sup.start_all()
    _wait_log(stubborn, "ready")
    assert len(_group_pids(stubborn)) == 2  # the child and its own child
    took = sup.stop_all()
    assert 0.4 < took < 10
    assert not quick.group_alive() and not stubborn.group_alive()
    assert quick.proc.returncode == -signal.SIGTERM and stubborn.proc.returncode == -signal.SIGKILL


def test_a_second_signal_skips_the_grace_but_still_cleans_up(tmp_path):
    stubborn = _child(tmp_path, "stubborn", STUBBORN)
    sup = Supervisor([stubborn], grace_s=30)
    sup.start_all()
    _wait_log(stubborn, "ready")
    sup.signals = 2  # Ctrl-C twice
    assert sup.stop_all() < 10 and not stubborn.group_alive()  # not the 30 s grace


def test_a_dead_child_is_restarted_with_backoff_and_the_others_keep_running(tmp_path):
    steady = _child(tmp_path, "steady", "import time; time.sleep(60)")
    crashy = Child("crashy", ["sh", "-c", "exit 3"], dict(os.environ), tmp_path / "crashy.log")
    sup = Supervisor([steady, crashy], grace_s=1, backoff_s=0.1, max_backoff_s=0.4)
    sup.start_all()
    try:
        first_steady = steady.proc.pid
        events: list[str] = []
        deadline = time.monotonic() + 20
        while sum(" restarted (pid" in e for e in events) < 4 and time.monotonic() < deadline:
            events += sup.check()
            time.sleep(0.01)
        delays = [e.split("restarting in ")[1].split(" s")[0] for e in events if "exited" in e]
        assert delays[:4] == ["0.1", "0.2", "0.4", "0.4"]  # doubling, capped
        assert "crashy exited (code 3)" in events[0] and crashy.restarts == 4
        assert steady.alive and steady.proc.pid == first_steady  # the others are untouched
    finally:
        sup.stop_all()


@pytest.mark.integration
def test_paperworks_up_restarts_a_killed_worker_and_stops_on_ctrl_c(tmp_path):
    from core.devstack import free_port

    env = dict(os.environ, PAPERWORKS_HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1")
    env.pop("PAPERWORKS_DATABASE_URL", None)
    env.pop("PAPERWORKS_BROKER_URL", None)
    log = tmp_path / "up.log"
    api_port = free_port()
    cmd = [sys.executable, "-m", "services.cli.main", "up", "--no-ui", "--api-port", str(api_port)]
    proc = subprocess.Popen(cmd, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while "Ctrl-C stops everything" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        kids = psutil.Process(proc.pid).children()
        assert len(kids) == 2 and all(os.getpgid(k.pid) == k.pid for k in kids)  # each in its own group
        worker = next(k for k in kids if "services.worker.main" in " ".join(k.cmdline()))
        worker.kill()
        while "worker restarted" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        import httpx

        assert httpx.get(f"http://127.0.0.1:{api_port}/healthz", timeout=5).status_code == 200  # API untouched
        kids = psutil.Process(proc.pid).children(recursive=True)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)  # impatient: must not abort the cleanup
        assert proc.wait(timeout=15) == 0
        assert time.monotonic() - t0 < 8
        assert not [k.pid for k in kids if k.is_running() and k.status() != psutil.STATUS_ZOMBIE]
    finally:
        if proc.poll() is None:
            for k in psutil.Process(proc.pid).children(recursive=True):
                k.kill()
            proc.kill()


def test_handlers_stay_installed_when_a_signal_is_stopping_us():
    sup = Supervisor([], grace_s=0.1)
    before = signal.getsignal(signal.SIGINT)
    sup.install_handlers()
    try:
        sup.release_handlers()  # no signal yet: back to what was there
        assert signal.getsignal(signal.SIGINT) is before
        sup.install_handlers()
        os.kill(os.getpid(), signal.SIGINT)  # the first Ctrl-C
        time.sleep(0.05)
        assert sup.stopping
        sup.release_handlers()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # a late second one, after the cleanup: ignored, not KeyboardInterrupt
        time.sleep(0.05)
        assert sup.signals == 1
    finally:
        sup.restore_handlers()
    assert signal.getsignal(signal.SIGINT) is before


# the tail of `up`: stopped by a signal, cleaned up, handlers released, then the interpreter exits
EXITING = (
    "import os, signal, time; from services.cli.up import Supervisor; sup = Supervisor([], grace_s=0.1); "
    "sup.install_handlers(); print('ready', flush=True); "
    "[time.sleep(0.01) for _ in range(500) if not sup.stopping]; sup.stop_all(); sup.release_handlers()"
)


def test_ctrl_c_during_interpreter_exit_does_not_kill_the_process():
    """Finalization resets Python-level signal handlers to SIG_DFL; a Ctrl-C landing there used to end `up`
    with -SIGINT instead of 0 (a CI failure of the integration test above). Keep sending SIGINT through the
    whole exit: the process must still end with 0."""
    repo = Path(__file__).resolve().parents[3]
    env = dict(os.environ, PYTHONPATH=str(repo))
    proc = subprocess.Popen([sys.executable, "-c", EXITING], env=env, stdout=subprocess.PIPE, cwd=repo)
    assert proc.stdout.readline().strip() == b"ready"
    sent = 0
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGINT)
            sent += 1
        time.sleep(0.0005)
    assert proc.wait(timeout=5) == 0 and sent > 1
