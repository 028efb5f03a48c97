"""The Double-Filter page with a scripted API client (Streamlit's AppTest): patch-filter button → route →
kept-patches overlay; experiment form → route → GA fitness curve and score-vs-cost plot."""

import io
import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import double_filter

    base = os.environ["DF_UI_FIXTURE"]
    schema = json.loads(open(base + ".schema").read())
    png = open(base + ".png", "rb").read()

    class FakeClient:
        def methods(self):
            from core.jobs import get_method

            patches = get_method("double_filter.patches").json_schema()
            return [
                {"name": "double_filter.experiment", "params_schema": schema},
                {"name": "double_filter.patches", "params_schema": patches},
            ]

        def post(self, path, json=None, files=None, data=None):
            import json as _json

            with open(base + ".posted", "a") as f:
                f.write(_json.dumps({"path": path, "json": json}) + "\n")
            return {"id": "job-patches" if path.endswith("/patches") else "job-exp"}

        def get(self, path, **params):
            assert path == "/v1/double_filter/paper"
            return [{"model": "METER", "task": "VQAv2", "quantity": "GFLOPs saved", "reported": "up to 21.18"}]

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return {"body": json.loads(open(base).read())[job_id]}

        def artifact(self, artifact_id):
            assert artifact_id in ("art-kept", "art-ga", "art-cost")
            return png

    double_filter.get_client = lambda: FakeClient()
    double_filter.render()


def _png() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    from core.jobs import get_method

    bodies = {
        "job-patches": {
            "title": "IPF: kept patches",
            "summary": "3 test scenes: kept 8 of 16 patches each",
            "artifacts": [{"name": "kept_patches.png", "id": "art-kept"}],
            "tables": [{"title": "Kept patches per scene", "columns": ["scene", "kept"], "rows": [[0, "1 2 3"]]}],
            "sections": [],
        },
        "job-exp": {
            "title": "Double-Filter",
            "summary": "1 run",
            "artifacts": [{"name": "ga_fitness.png", "id": "art-ga"}, {"name": "score_vs_cost.png", "id": "art-cost"}],
            "tables": [{"title": "§7 checks", "columns": ["check", "pass"], "rows": [["4. GA valid", "PASS"]]}],
            "sections": [{"title": "Reading", "markdown": "what holds"}],
        },
    }
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(bodies))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(get_method("double_filter.experiment").json_schema()))
    (tmp_path / "fixture.json.png").write_bytes(_png())
    monkeypatch.setenv("DF_UI_FIXTURE", str(path))
    return path


def test_patches_then_experiment(fixture_file):
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert not [e for e in at.main if getattr(e, "type", None) == "image"], "no image before a job ran"
    at.number_input(key="df-patches-rho").set_value(0.25)
    at.button(key="df-patches-submit").click()
    at.run()
    assert not at.exception, at.exception
    posted = [json.loads(x) for x in open(str(fixture_file) + ".posted").read().splitlines()]
    assert posted[0]["path"] == "/v1/double_filter/patches" and posted[0]["json"]["rho"] == 0.25
    assert len([e for e in at.main if getattr(e, "type", None) == "image"]) == 1, "the kept-patches overlay"
    assert any("kept" in d.value.columns for d in at.dataframe)
    submit = next(b for b in at.button if "Run experiment" in str(b.label))
    submit.click()
    at.run()
    assert not at.exception, at.exception
    posted = [json.loads(x) for x in open(str(fixture_file) + ".posted").read().splitlines()]
    assert posted[-1]["path"] == "/v1/double_filter/experiment"
    assert posted[-1]["json"]["tasks"] == ["vqa", "nlvr", "retrieval"]
    assert len([e for e in at.main if getattr(e, "type", None) == "image"]) == 3, "overlay + GA curve + cost plot"
