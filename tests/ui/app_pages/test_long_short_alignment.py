"""The long-short alignment page with a scripted API client (AppTest, no server): a real ``lsa.synthetic``
report (tiny run) is served and the page shows the MSE-vs-length chart and table."""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import long_short_alignment

    base = os.environ["LSA_UI_FIXTURE"]
    fixture = json.loads(open(base).read())
    schema = json.loads(open(base + ".schema").read())

    class FakeClient:
        def methods(self):
            return [{"name": "lsa.synthetic", "params_schema": schema}]

        def submit(self, method, params, idempotency_key=None):
            with open(base + ".submitted", "w") as f:
                json.dump({"method": method, "params": params}, f)
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return fixture

    long_short_alignment.get_client = lambda: FakeClient()
    long_short_alignment.render()


def test_submit_synthetic_then_curve(tmp_path, monkeypatch):
    from core.jobs import get_method, null_context

    spec = get_method("lsa.synthetic")
    rep = spec.run(
        spec.validate({"task": "length", "pe": "learned", "steps": 3, "eval_per_length": 10}), null_context()
    )
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(spec.json_schema()))
    monkeypatch.setenv("LSA_UI_FIXTURE", str(path))
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(path) + ".submitted").read())
    assert sent["method"] == "lsa.synthetic"
    assert at.table, "the MSE table is shown"
    assert rep.data["mse"]["50"] is None  # learned positions refuse l = 50
