"""The DOR page (AppTest, a recording fake of the API client): submits dor.tune and shows its report."""

import io

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, format="PNG")
    return buf.getvalue()


class FakeClient:
    def __init__(self):
        self.submitted = []

    def submit(self, method, params, idempotency_key=None):
        self.submitted.append((method, params))
        return {"id": "job-1"}

    def job(self, job_id):
        return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

    def jobs(self, limit=20, method=None):
        return []

    def report(self, job_id):
        return {
            "title": "t",
            "markdown": "# t",
            "body": {
                "title": "Prompt tuning calibration: coop+dor",
                "summary": "New-class ECE 9.0% zero-shot → 4.0%",
                "metrics": {"new_ece": 4.0},
                "tables": [{"title": "Calibration", "columns": ["arm", "new ECE"], "rows": [["coop+dor", 4.0]]}],
                "artifacts": [{"name": "reliability.png", "id": "a1", "kind": "plot", "caption": "Reliability"}],
            },
        }

    def artifact(self, artifact_id):
        return _png()


def _script():
    from ui.app_pages import dor

    dor.render()


@pytest.fixture
def fake(monkeypatch):
    from ui.app_pages import dor

    client = FakeClient()
    monkeypatch.setattr(dor, "get_client", lambda: client)
    return client


def test_page_submits_a_tune_job_and_shows_the_reliability_diagram(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    assert not at.exception
    at.radio(key="dor-host").set_value("kgcoop")
    at.number_input(key="dor-epochs").set_value(20)
    at.button(key="dor-go").click().run()
    assert not at.exception
    method, params = fake.submitted[0]
    assert method == "dor.tune" and params["host"] == "kgcoop" and params["epochs"] == 20 and params["dor"] is True
    assert any("Prompt tuning calibration" in s.value for s in at.subheader)
