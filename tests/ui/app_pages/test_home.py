"""The home page's "Getting started": one card per example, one click submits it and follows the job."""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import home
    from ui.client import ApiError

    log = os.environ["HOME_UI_LOG"]

    class FakeClient:
        def ready(self):
            return {"status": "ok", "checks": {"database": "ok", "broker": "ok", "vectorstore": "ok"}}

        def methods(self):
            return [
                {
                    "name": "diag.sleep",
                    "title": "Diagnostic sleep",
                    "description": "Sleep.",
                    "queue": "cpu",
                    "params_schema": {"type": "object", "properties": {"seconds": {"type": "number", "default": 1}}},
                }
            ]

        def examples(self):
            return [
                {
                    "name": "progress",
                    "method": "diag.sleep",
                    "title": "Watch a job's progress",
                    "params": {"seconds": 3, "steps": 6},
                    "about": "A job that only reports progress.",
                    "seconds": 4,
                }
            ]

        def submit(self, method, params, idempotency_key=None):
            with open(log, "a") as f:
                f.write(json.dumps({"method": method, "params": params}) + "\n")
            return {"id": "job-1"}

        def jobs(self, limit=30, method=None):
            return []

        def get(self, path, **params):
            return []

        def job(self, job_id):
            return {"id": job_id, "method": "diag.sleep", "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            raise ApiError(404, "no report in this test")

    home.get_client = lambda: FakeClient()
    home.render()


def test_getting_started_runs_an_example_in_one_click(tmp_path, monkeypatch):
    log = tmp_path / "submitted.jsonl"
    monkeypatch.setenv("HOME_UI_LOG", str(log))
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert any("paperworks try progress" in c.value for c in at.code)
    at.button(key="try-progress").click()
    at.run()
    assert not at.exception, at.exception
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        {"method": "diag.sleep", "params": {"seconds": 3, "steps": 6}}
    ]
    assert at.session_state["selected_job"] == "job-1"
