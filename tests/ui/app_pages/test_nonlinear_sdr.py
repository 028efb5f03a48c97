"""The SDR page with a scripted API client (Streamlit's AppTest, no server, no browser).

The fake client serves a real ``nonlinear_sdr.fit`` report (iris, linear PSVM) and the job's real
params schema, so the page is checked against what the API returns.
"""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import nonlinear_sdr

    base = os.environ["SDR_UI_FIXTURE"]
    fixture = json.loads(open(base).read())
    schema = json.loads(open(base + ".schema").read())

    class FakeClient:
        def methods(self):
            return [{"name": "nonlinear_sdr.fit", "params_schema": schema}]

        def submit(self, method, params, idempotency_key=None):
            with open(base + ".submitted", "w") as f:
                json.dump({"method": method, "params": params}, f)
            return {"id": "job-1"}

        def post(self, path, json=None, files=None, data=None):
            import json as _json

            with open(base + ".posted", "w") as f:
                _json.dump({"path": path, "files": sorted(files), "data": data}, f)
            return {"id": "job-2"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return fixture

        def artifact(self, artifact_id):
            return open(base + ".png", "rb").read()

    nonlinear_sdr.get_client = lambda: FakeClient()
    if os.environ.get("SDR_UI_UPLOAD"):

        class Upload:
            name = "t.csv"

            def getvalue(self):
                return b"a,b,y\n1,2,3\n"

        nonlinear_sdr._submit(
            FakeClient(), {"upload": Upload(), "response": "y"}, {"method": "linear", "evaluate": False}
        )
    else:
        nonlinear_sdr.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    from core.jobs import get_method, null_context

    spec = get_method("nonlinear_sdr.fit")
    rep = spec.run(spec.validate({"dataset": "iris", "method": "linear", "n_components": 2}), null_context())
    png = rep.pending_files()["sufficient_plot.png"]
    for a in rep.artifacts:
        a.id = f"art-{a.name}"
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(spec.json_schema()))
    (tmp_path / "fixture.json.png").write_bytes(png)
    monkeypatch.setenv("SDR_UI_FIXTURE", str(path))
    return path, rep


def test_submit_a_bundled_dataset_then_plot_and_directions(fixture_file):
    path, rep = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="sdr-ds").value == "wine"
    assert at.selectbox(key="sdr-method").options[:3] == ["linear", "kernel", "neural"]
    assert at.selectbox(key="sdr-method").value == "kernel"
    at.selectbox(key="sdr-ds").set_value("iris")
    at.selectbox(key="sdr-method").set_value("linear")
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(path) + ".submitted").read())
    assert sent["method"] == "nonlinear_sdr.fit"
    assert sent["params"]["dataset"] == "iris" and sent["params"]["method"] == "linear"
    images = [e for e in at.main if getattr(e, "type", None) == "image"]
    assert images, "the sufficient plot is shown"
    frames = [d.value for d in at.dataframe]
    directions = next(f for f in frames if "β1" in f.columns)
    assert len(directions) == 4 and set(directions["predictor"]) == set(rep.data["features"])


def test_an_upload_goes_to_the_sdr_route(fixture_file, monkeypatch):
    path, _ = fixture_file
    monkeypatch.setenv("SDR_UI_UPLOAD", "1")
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    posted = json.loads(open(str(path) + ".posted").read())
    assert posted == {
        "path": "/v1/sdr/fit",
        "files": ["table"],
        "data": {"method": "linear", "evaluate": "false", "response": "y"},
    }
