"""POST /v1/factcheck → job → report, bad input → 4xx, and the Streamlit page rendering the finished report."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from PIL import Image, ImageDraw, ImageFont

REPO = Path(__file__).resolve().parents[3]
PLAN = "Read the sign.\n```\nocr(<image:1>)\n```"


def _png(size=(480, 140), text="BRIDGE CLOSED 1952") -> bytes:
    img = Image.new("RGB", size, "white")
    ImageDraw.Draw(img).text((15, 40), text, fill="black", font=ImageFont.load_default(size=36))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def scripted_settings(settings, stage_llm, monkeypatch):
    model, script = stage_llm(
        {
            "plan": [PLAN],
            "develop": ["The sign says the bridge closed, not opened."],
            "judge": ["The OCR text contradicts the claim. `refuted`"],
            "justify": ["The image's text reads BRIDGE CLOSED 1952."],
        }
    )
    monkeypatch.setattr(settings, "llm_model", model)
    return script


def _run_job(job_id: str) -> None:
    from core.jobs.lifecycle import execute_job

    execute_job(job_id)


@pytest.fixture
def finished_job(api_client, scripted_settings):
    r = api_client.post(
        "/v1/factcheck",
        data={"claim": "The bridge opened in 1952.", "date": "2021-03-01"},
        files=[("images", ("sign.png", _png(), "image/png"))],
    )
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["method"] == "defame.check" and job["status"] == "queued"
    _run_job(job["id"])
    return job["id"]


def test_factcheck_with_image_job_report(api_client, finished_job, scripted_settings):
    job = api_client.get(f"/v1/jobs/{finished_job}").json()
    assert job["status"] == "succeeded", job
    rep = api_client.get(f"/v1/jobs/{finished_job}/report").json()
    data = rep["body"]["data"]
    assert data["verdict"] == "refuted" and data["verdict_name"] == "REFUTED"
    assert "BRIDGE CLOSED 1952" in data["justification"]
    ocr = [e for e in data["evidence"] if e["action"] == "ocr(<image:1>)"]
    assert ocr and "BRIDGE CLOSED 1952" in ocr[0]["summary"]  # real Tesseract output became evidence
    assert "/v1/artifacts/" in rep["markdown"] and "### Verdict: REFUTED" in rep["markdown"]
    assert scripted_settings.order == ["plan", "develop", "judge", "justify"]
    assert {"plan", "develop", "judge", "justify"} <= set(data["usage"])


@pytest.mark.parametrize(
    "data,files,code,needle",
    [
        ({"claim": "   "}, None, 422, "empty"),
        ({"claim": "x", "date": "2021-13-45"}, None, 422, "malformed date"),
        ({"claim": "x", "date": "yesterday"}, None, 422, "malformed date"),
        ({"claim": "x", "verdict": "vibes"}, None, 422, "calibrated"),
        ({"claim": "x"}, [("images", ("a.txt", b"not an image at all", "text/plain"))], 415, "not a readable image"),
    ],
)
def test_bad_input_is_a_clear_4xx(api_client, data, files, code, needle):
    r = api_client.post("/v1/factcheck", data=data, files=files)
    assert r.status_code == code, r.text
    assert needle in r.text


def test_huge_image_is_413(api_client, settings, monkeypatch):
    monkeypatch.setattr(settings, "max_image_pixels", 10_000)
    r = api_client.post("/v1/factcheck", data={"claim": "x"}, files=[("images", ("big.png", _png(), "image/png"))])
    assert r.status_code == 413 and "pixels" in r.text
    monkeypatch.setattr(settings, "max_upload_bytes", 100)
    r = api_client.post("/v1/factcheck", data={"claim": "x"}, files=[("images", ("big.png", _png(), "image/png"))])
    assert r.status_code == 413


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.integration
def test_streamlit_page_renders_the_finished_report(finished_job, api_key, tmp_path):
    """The page, in Debian's chromium, shows the verdict, evidence and the document with its image."""
    import uvicorn
    from playwright.sync_api import sync_playwright

    from services.api.main import create_app

    api_port, ui_port = _free_port(), _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=api_port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    env = dict(os.environ, PAPERWORKS_API_URL=f"http://127.0.0.1:{api_port}", PAPERWORKS_API_KEY=api_key)
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
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{ui_port}/_stcore/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            page = browser.new_page(viewport={"width": 1300, "height": 2000})
            page.goto(f"http://127.0.0.1:{ui_port}/defame?job={finished_job}", timeout=60_000)
            # the page's verdict heading, and the same verdict again inside the fact-checking document
            page.get_by_text("Verdict: REFUTED").first.wait_for(timeout=60_000)
            page.get_by_text("Fact-checking document").wait_for(timeout=30_000)
            page.get_by_text("ocr(<image:1>)").first.wait_for(timeout=30_000)
            page.get_by_text("Verdict: REFUTED").nth(1).wait_for(timeout=30_000)  # the document's own verdict
            page.wait_for_function(
                "() => [...document.querySelectorAll('img')].some(i => i.complete && i.naturalWidth >= 400)",
                timeout=30_000,
            )
            from tests.screenshots import screenshot_path

            page.screenshot(path=str(screenshot_path("defame_report.png", tmp_path)), full_page=True)
            browser.close()
    finally:
        os.killpg(ui.pid, 15)
        ui.wait(timeout=20)
        server.should_exit = True
