"""``/v1/webagent`` routes and the Streamlit trajectory browser (in chromium) on a stored trajectory."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from agents.pae import store
from agents.pae.evaluator import OracleEvaluator
from agents.pae.rollout import run_episode
from agents.pae.scripted import ScriptedPolicy
from agents.pae.sites import build_sites

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def stored(env, tmp_path_factory):
    """A run holding one successful scripted trajectory on the shop, with its screenshots and verdict."""
    site = build_sites(0)["shop"]
    task = next(t for t in site.template_tasks(random.Random(11), 10) if t.template == "cart")
    traj = run_episode(env, ScriptedPolicy(task), task, tmp_path_factory.mktemp("shots") / "s")
    run_id = store.create_run(name="ui-test", config={})
    task_row = store.add_tasks(run_id=run_id, tasks=[task], split="train")[task.id]
    tid = store.save_trajectory(run_id=run_id, iteration=0, phase="rollout", slot=0, task_row_id=task_row, traj=traj)
    store.save_verdict(trajectory_id=tid, verdict=OracleEvaluator().evaluate(task.reference, traj.answer))
    store.set_reward(trajectory_id=tid, reward=1.0)
    return run_id, tid, task


@pytest.fixture
def admin_key():
    """Runs stored in-process (as ``paperworks pae run`` does) belong to no API key: admin keys see them."""
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        _, key = crud.create_api_key(s, name="pae-admin", scopes="admin")
    return key


def test_routes_serve_runs_trajectories_and_screenshots(api_client, stored, admin_key):
    run_id, tid, task = stored
    plain = api_client.headers["Authorization"]
    assert all(r["id"] != run_id for r in api_client.get("/v1/webagent/runs").json())  # not this key's run
    assert api_client.get(f"/v1/webagent/trajectories/{tid}").status_code == 404
    api_client.headers["Authorization"] = f"Bearer {admin_key}"
    assert {s["name"] for s in api_client.get("/v1/webagent/sites").json()} == {
        "shop",
        "recipes",
        "dictionary",
        "news",
        "map",
    }
    assert any(r["id"] == run_id for r in api_client.get("/v1/webagent/runs").json())
    rows = api_client.get(f"/v1/webagent/runs/{run_id}/trajectories", params={"phase": "rollout"}).json()
    assert [r["id"] for r in rows] == [tid] and rows[0]["oracle_reward"] == 1.0
    d = api_client.get(f"/v1/webagent/trajectories/{tid}").json()
    assert d["task"]["question"] == task.question and len(d["steps"]) == 4
    assert d["steps"][0]["action"].startswith("Type [") and d["verdicts"][0]["evaluator"] == "oracle"
    sha = d["steps"][2]["screenshots"]["before"]
    png = api_client.get(f"/v1/webagent/screenshots/{sha}")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert api_client.get(f"/v1/webagent/screenshots/{sha}", headers={"Authorization": plain}).status_code == 404


def test_routes_reject_bad_input(api_client):
    assert api_client.get("/v1/webagent/runs/not-an-id").status_code == 422
    assert api_client.get(f"/v1/webagent/runs/{'0' * 32}").status_code == 404
    assert api_client.get(f"/v1/webagent/trajectories/{'0' * 32}").status_code == 404
    assert api_client.get(f"/v1/webagent/screenshots/{'a' * 64}").status_code == 404  # not a PAE screenshot
    assert api_client.get("/v1/webagent/screenshots/../../etc/passwd").status_code == 404
    r = api_client.post("/v1/webagent/runs", json={"train_sites": ["github"]})
    assert r.status_code == 422 and "unknown sites" in r.text
    assert api_client.post("/v1/webagent/runs", json={"iterations": -1}).status_code == 422
    noauth = api_client.get("/v1/webagent/runs", headers={"Authorization": ""})
    assert noauth.status_code == 401


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.integration
def test_trajectory_browser_in_chromium(stored, admin_key, env, tmp_path):
    api_key = admin_key
    """The page shows the stored trajectory step by step with its screenshot (saved in a temporary folder)."""
    import uvicorn

    from services.api.main import create_app

    run_id, tid, task = stored
    api_port, ui_port = _free_port(), _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=api_port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    ui_env = dict(os.environ, PAPERWORKS_API_URL=f"http://127.0.0.1:{api_port}", PAPERWORKS_API_KEY=api_key)
    ui = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "ui/app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(ui_port),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=REPO,
        env=ui_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{ui_port}/_stcore/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        # the module's chromium (Playwright's sync API allows one driver per thread); a separate context
        ctx = env.browser.new_context(viewport={"width": 1400, "height": 1500})
        try:
            page = ctx.new_page()
            page.goto(f"http://127.0.0.1:{ui_port}/pae?run={run_id}&traj={tid}", timeout=90_000)
            page.get_by_text("Step 1 of 4").wait_for(timeout=90_000)
            page.get_by_text(task.question).first.wait_for(timeout=30_000)
            page.get_by_text("Per-iteration success and upper bound").wait_for(timeout=30_000)
            page.wait_for_function(
                "() => [...document.querySelectorAll('img')].some(i => i.complete && i.naturalWidth >= 1000)",
                timeout=60_000,
            )
            assert page.get_by_text("Type [").first.is_visible()
            from tests.screenshots import screenshot_path

            page.screenshot(path=str(screenshot_path("pae_trajectory.png", tmp_path)), full_page=True)
            page.get_by_text("Start a PAE run").click()  # the form offers the method's reward first
            reward = page.locator("input[aria-label='Reward']")
            reward.wait_for(timeout=30_000)
            assert reward.input_value() == "LLM judge (the method)"
            assert float(page.locator("input[aria-label='Test temperature']").input_value()) == 1.0  # the model's
        finally:
            ctx.close()
    finally:
        os.killpg(ui.pid, 15)
        ui.wait(timeout=20)
        server.should_exit = True
