"""The LADA / X-TAIL page with a scripted API client (Streamlit's AppTest, no server, no browser).

The report body is built by the real report builder (``methods.lada.report.run_report``) from a
hand-made two-seed experiment, so the page is checked against the JSON shape ``lada.xtail`` stores.
"""

import json

import pytest

from methods.continual.xtail import XTailExperiment, XTailRun
from methods.lada.report import run_report

streamlit_testing = pytest.importorskip("streamlit.testing.v1")

DOMAINS = ["colours", "digits", "objects"]
A0 = [[0.9, 0.1, 0.2], [0.8, 0.7, 0.3], [0.7, 0.6, 0.5]]
A1 = [[0.7, 0.3, 0.2], [0.6, 0.9, 0.1], [0.5, 0.8, 0.7]]


def _app():
    import json
    import os

    from ui.app_pages import lada

    fixture = json.loads(open(os.environ["LADA_UI_FIXTURE"]).read())

    class FakeClient:
        def methods(self):
            from core.jobs import get_method

            return [{"name": "lada.xtail", "params_schema": get_method("lada.xtail").json_schema()}]

        def get(self, path, **params):
            if path.endswith("/domains"):
                return [{"name": d, "classnames": ["a", "b"]} for d in ["colours", "digits", "objects"]]
            return [{"method": "LADA", "transfer": "61.5", "average": "72.7", "last": "83.1"}]

        def post(self, path, json=None, files=None, data=None):
            with open(os.environ["LADA_UI_FIXTURE"] + ".submitted", "w") as f:
                f.write(__import__("json").dumps({"path": path, "params": json}))
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return fixture["report"]

        def artifact(self, artifact_id):
            return fixture["png"].encode("latin-1")

        def cancel(self, job_id):
            return {}

    lada.get_client = lambda: FakeClient()
    lada.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    exp = XTailExperiment("lada", ["lada", "text"], DOMAINS, {})
    for seed, A in enumerate((A0, A1)):
        exp.runs.append(XTailRun(seed, DOMAINS, {"lada": A, "text": A0}, {"lada": A, "text": A0}))
    report = run_report(exp, {"method": "lada"})
    png = report.pending_files()["matrix.png"]
    for a in report.artifacts:
        report.mark_stored(a.name, f"id-{a.name}")
    data = {
        "report": {"title": report.title, "body": report.model_dump(mode="json"), "markdown": ""},
        "png": png.decode("latin-1"),
    }
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(data))
    monkeypatch.setenv("LADA_UI_FIXTURE", str(path))
    return path


def test_submit_then_metrics_and_accuracy_matrix_heatmap(fixture_file):
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    at.number_input(key="lada-seeds").set_value(3)
    at.button(key="lada-submit").click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(fixture_file) + ".submitted").read())
    assert sent["path"] == "/v1/lada/xtail"
    assert sent["params"]["method"] == "lada" and sent["params"]["seeds"] == 3 and sent["params"]["shots"] == 16
    assert sent["params"]["domains"] == DOMAINS
    union = at.table[1].value  # table 0: the paper numbers
    # lada head: Last = mean of the seeds' last rows (0.6 and 0.667) → 63.3 ± 3.3;
    # text head (A0 twice): Transfer = mean(A[1,2], mean(A[1,3], A[2,3])) = mean(0.1, 0.25) → 17.5
    assert list(union.index) == ["lada", "text"]
    assert union.loc["lada", "Last (%)"] == "63.3 ± 3.3"
    assert union.loc["text", "Transfer (%)"] == "17.5 ± 0.0"
    mat = at.dataframe[0].value
    assert mat.shape == (3, 3)
    assert mat.iloc[0, 1] == pytest.approx(20.0)  # seed mean of 0.1 and 0.3 above the diagonal (zero-shot cell)
    charts = at.get("vega_lite_chart")  # the accuracy-matrix heat map
    assert len(charts) == 1
    spec = charts[0].proto.spec
    assert '"rect"' in spec and "test domain" in spec and "after step" in spec
