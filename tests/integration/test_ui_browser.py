"""The web UI in a real browser (Debian's chromium via Playwright) against `paperworks up`."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def paperworks_up(tmp_path):
    api_port, ui_port = _free_port(), _free_port()
    env = dict(os.environ, PAPERWORKS_HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1")
    env.pop("PAPERWORKS_DATABASE_URL", None)
    env.pop("PAPERWORKS_BROKER_URL", None)
    log = open(tmp_path / "up.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "up", "--api-port", str(api_port), "--ui-port", str(ui_port)],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    ui = f"http://127.0.0.1:{ui_port}"
    tree = []
    try:
        deadline = time.monotonic() + 120
        while "Web UI" not in (tmp_path / "up.log").read_text(errors="replace"):
            assert proc.poll() is None, (tmp_path / "up.log").read_text()
            assert time.monotonic() < deadline, (tmp_path / "up.log").read_text()
            time.sleep(0.5)
        httpx.get(ui, timeout=10)
        yield ui
    finally:
        # `up` runs each child in its own process group: remember them all, so that nothing outlives the test
        import psutil

        with contextlib.suppress(psutil.NoSuchProcess):
            tree = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C does
        try:
            assert proc.wait(timeout=15) == 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            for child in tree:
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.kill()
    out = (tmp_path / "up.log").read_text()
    assert "stopping" in out
    assert not [c.pid for c in tree if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]


def test_home_page_submits_llm_complete_and_renders_the_report(paperworks_up, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2200})
        page.goto(paperworks_up, timeout=60_000)
        page.get_by_text("Run a method").wait_for(timeout=60_000)
        expect(page.get_by_text("ready", exact=True)).to_be_visible(timeout=30_000)
        page.get_by_role("textbox", name="Prompts — one per line").fill("What is 2+3?")
        page.get_by_role("spinbutton", name="Max Tokens").fill("12")
        page.get_by_role("button", name="Submit job").click()
        page.get_by_text("Submitted job").wait_for(timeout=30_000)
        # the report renders once the worker finishes: the completions table and the tokens/s metric
        page.get_by_text("tokens_per_s").first.wait_for(timeout=240_000)
        page.get_by_text("Completions", exact=True).first.wait_for(timeout=30_000)
        expect(page.get_by_text("2 + 3 = 5").first).to_be_visible()
        from tests.screenshots import screenshot_path

        page.screenshot(path=str(screenshot_path("home_llm_complete.png", tmp_path)), full_page=True)
        browser.close()
