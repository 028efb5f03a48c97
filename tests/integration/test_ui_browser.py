"""The web UI and the API docs in a real browser (Debian's chromium via Playwright).

One API + worker + UI (on a fresh home) and one chromium serve the whole module; each test
opens its own browser context. Screenshots go to a temporary folder (tests/screenshots.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

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


def _wait(url: str, procs: list[subprocess.Popen], logs: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(url, timeout=3).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        dead = [p.args for p in procs if p.poll() is not None]
        logs_text = "\n".join(f.read_text(errors="replace")[-2000:] for f in sorted(logs.glob("*.log")))
        assert not dead, f"{dead} exited:\n{logs_text}"
        assert time.monotonic() < deadline, f"{url} did not answer in {seconds:.0f} s:\n{logs_text}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def paperworks_up(tmp_path_factory):
    """API + worker + web UI on a fresh home, as `paperworks up` starts them (its own test is
    tests/services/cli/test_up*): ``{"ui", "api", "db"}``. Start-up may take minutes on a busy 2-core machine
    (importing every method), longer than `up`'s own 60 s, so the services are started here."""
    from core.db import crud, migrate
    from core.db.session import session_scope

    tmp_path = tmp_path_factory.mktemp("up")
    home = tmp_path / "home"
    api_port, ui_port = _free_port(), _free_port()
    env = dict(os.environ, PAPERWORKS_HOME=str(home), PYTHONUNBUFFERED="1")
    for var in ("PAPERWORKS_DATABASE_URL", "PAPERWORKS_BROKER_URL"):
        env.pop(var, None)
    old = os.environ.get("PAPERWORKS_HOME")
    os.environ["PAPERWORKS_HOME"] = str(home)  # the key is made in the services' database
    from core.config import get_settings
    from core.db.session import get_engine

    get_settings.cache_clear()
    get_engine.cache_clear()
    try:
        migrate.upgrade()
        with session_scope() as db:
            _, key = crud.create_api_key(db, name="ui-browser-test", scopes="admin")
    finally:
        os.environ["PAPERWORKS_HOME"] = old or ""
        get_settings.cache_clear()
        get_engine.cache_clear()
    api = f"http://127.0.0.1:{api_port}"
    ui = f"http://127.0.0.1:{ui_port}"
    cmds = {
        "api": [sys.executable, "-m", "uvicorn", "--factory", "services.api.main:create_app", "--port", str(api_port)],
        "worker": [sys.executable, "-m", "services.worker.main", "--pool=solo"],
        "ui": [sys.executable, "-m", "streamlit", "run", "ui/app.py", "--server.headless", "true",
               "--server.port", str(ui_port), "--browser.gatherUsageStats", "false"],
    }  # fmt: skip
    env_ui = dict(env, PAPERWORKS_API_URL=api, PAPERWORKS_API_KEY=key)
    procs = []
    for name, cmd in cmds.items():
        log = open(tmp_path / f"{name}.log", "wb")
        procs.append(
            subprocess.Popen(
                cmd, cwd=REPO, env=env_ui if name == "ui" else env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )  # fmt: skip
    try:
        _wait(f"{api}/healthz", procs, tmp_path, 300)
        _wait(f"{ui}/_stcore/health", procs, tmp_path, 300)
        yield {"ui": ui, "api": api, "db": home / "paperworks.db"}
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def offline(browser):
    """A browser context whose requests to anything but this machine are aborted (the network is off);
    ``context.blocked`` lists them."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 2200})
    ctx.blocked = []

    def route(r):
        host = urlparse(r.request.url).hostname
        if host in ("127.0.0.1", "localhost") or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            ctx.blocked.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    yield ctx
    ctx.close()


def _jobs(db: Path, method: str) -> int:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return con.execute("SELECT count(*) FROM jobs WHERE method = ?", (method,)).fetchone()[0]


def test_home_page_submits_llm_complete_and_renders_the_report(paperworks_up, offline, tmp_path):
    from playwright.sync_api import expect

    from tests.screenshots import screenshot_path

    page = offline.new_page()
    page.goto(paperworks_up["ui"], timeout=60_000)
    page.get_by_text("Run a method").wait_for(timeout=60_000)
    expect(page.get_by_text("ready", exact=True)).to_be_visible(timeout=30_000)
    # one getting-started example per method, each with its `paperworks try` line
    page.get_by_text("paperworks try sdr").wait_for(timeout=30_000)
    # Streamlit renders the examples one element at a time: count once the page has had time to finish
    tries = page.get_by_text("paperworks try ", exact=False)
    deadline = time.monotonic() + 30
    while tries.count() < 19 and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    assert tries.count() >= 19
    page.get_by_role("textbox", name="prompts — one per line").fill("What is 2+3?")
    page.get_by_role("spinbutton", name="max_tokens").fill("12")
    page.get_by_role("button", name="Submit job").click()
    page.get_by_text("Submitted job").wait_for(timeout=30_000)
    # the report renders once the worker finishes: the completions table and the tokens/s metric
    page.get_by_text("tokens_per_s").first.wait_for(timeout=240_000)
    page.get_by_text("Completions", exact=True).first.wait_for(timeout=30_000)
    expect(page.get_by_text("2 + 3 = 5").first).to_be_visible()
    page.screenshot(path=str(screenshot_path("home_llm_complete.png", tmp_path)), full_page=True)
    assert not offline.blocked, offline.blocked


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_api_docs_render_the_method_routes_with_the_network_off(paperworks_up, offline, path):
    page = offline.new_page()
    page.goto(paperworks_up["api"] + path, timeout=60_000)
    # Swagger UI and ReDoc draw the operations from /openapi.json: the generic job routes and method routes
    for route in ("/v1/jobs", "/v1/methods", "/v1/sdr/fit", "/v1/readiness"):
        page.get_by_text(route, exact=False).first.wait_for(timeout=60_000)
    assert not offline.blocked, f"{path} tried to reach {offline.blocked}"


def test_enter_in_a_number_field_creates_no_job_only_the_button_does(paperworks_up, offline):
    page = offline.new_page()
    page.goto(paperworks_up["ui"] + "/nonlinear_sdr", timeout=60_000)
    field = page.get_by_role("spinbutton", name="λ")
    field.wait_for(timeout=60_000)
    before = _jobs(paperworks_up["db"], "nonlinear_sdr.fit")
    field.fill("0.5")
    field.press("Enter")
    field.press("Enter")
    page.wait_for_timeout(4000)  # a submission would be a job row by now
    assert _jobs(paperworks_up["db"], "nonlinear_sdr.fit") == before
    page.get_by_role("button", name="Reduce").click()  # the button does submit: the count can move
    deadline = time.monotonic() + 30
    while _jobs(paperworks_up["db"], "nonlinear_sdr.fit") == before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _jobs(paperworks_up["db"], "nonlinear_sdr.fit") == before + 1


def test_sdr_d_beyond_the_range_or_the_features_is_refused_with_a_visible_sentence(paperworks_up, offline):
    from playwright.sync_api import expect

    page = offline.new_page()
    page.goto(paperworks_up["ui"] + "/nonlinear_sdr", timeout=60_000)
    d = page.get_by_role("spinbutton", name="Dimensions d")
    d.wait_for(timeout=60_000)
    before = _jobs(paperworks_up["db"], "nonlinear_sdr.fit")
    # outside the model's range: said under the input, and the button is blocked saying why
    d.fill("999")
    d.press("Tab")
    expect(page.get_by_text("Dimensions d: must be 0 to 50 (got 999).").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("“Reduce” is blocked until this is fixed", exact=False)).to_be_visible()
    expect(page.get_by_role("button", name="Reduce")).to_be_disabled()
    # within the range but more than wine's 13 features: the API's sentence (the params model's validator)
    d.fill("40")
    d.press("Tab")
    expect(page.get_by_role("button", name="Reduce")).to_be_enabled(timeout=30_000)
    page.get_by_role("button", name="Reduce").click()
    msg = page.get_by_text("d = 40 is larger than the 13 features of wine", exact=False).first
    expect(msg).to_be_visible(timeout=30_000)
    assert "{" not in msg.inner_text() and "errors" not in msg.inner_text()  # a sentence, not a raw dict
    assert _jobs(paperworks_up["db"], "nonlinear_sdr.fit") == before
