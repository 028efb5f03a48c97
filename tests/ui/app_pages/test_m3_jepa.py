"""The M3-JEPA page with a scripted API client (Streamlit's AppTest): caption → retrieve route → digits and
routing images; the study form → study route → recall and expert-usage plots."""

import json

import numpy as np
import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import m3_jepa

    base = os.environ["M3_UI_FIXTURE"]
    bodies = json.loads(open(base).read())
    schema = json.loads(open(base + ".schema").read())

    class FakeClient:
        def methods(self):
            from core.jobs import get_method

            retrieve = get_method("m3_jepa.retrieve").json_schema()
            return [
                {"name": "m3_jepa.study", "params_schema": schema},
                {"name": "m3_jepa.retrieve", "params_schema": retrieve},
            ]

        def post(self, path, json=None, files=None, data=None):
            import json as _json

            with open(base + ".posted", "a") as f:
                f.write(_json.dumps({"path": path, "json": json}) + "\n")
            return {"id": "job-retrieve" if path.endswith("/retrieve") else "job-study"}

        def get(self, path, **params):
            assert path in ("/v1/m3_jepa/variants", "/v1/m3_jepa/paper")
            return [{"variant": "m3_jepa", "description": "M3-JEPA"}]

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return {"body": bodies[job_id]}

        def artifact(self, artifact_id):
            return open(base + "." + artifact_id, "rb").read()

    m3_jepa.get_client = lambda: FakeClient()
    m3_jepa.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    from core.jobs import Report, get_method
    from methods.m3_jepa import plots
    from methods.m3_jepa.report import retrieve_report

    rng = np.random.default_rng(0)
    hits = [
        {
            "rank": i + 1,
            "test_index": i,
            "label": 7,
            "ink": 2,
            "slant": 0,
            "caption": "a bold seven",
            "similarity": 0.9 - i / 10,
        }
        for i in range(3)
    ]
    tokens = ["a", " bold", " seven"]
    routing = {b: rng.dirichlet(np.ones(6), size=3).tolist() for b in ("pred", "cl")}
    r = {"caption": "a bold seven", "variant": "m3_jepa", "seed": 0, "hits": hits, "images": rng.random((3, 8, 8)),
         "tokens": tokens, "routing": routing, "model_metrics": {}}  # fmt: skip
    retr = retrieve_report(r)
    usage = {
        k: {"weight": rng.random(6).tolist(), "selected": rng.random(6).tolist()}
        for k in ("t2i/pred", "t2i/cl", "i2t/pred", "i2t/cl")
    }
    study = Report(title="M3-JEPA study", summary="mean R@1 …")
    study.add_figure("recall.png", plots.recall_bars([("m3_jepa", 0.1, 0.01, 0.12, 0.02)], 1 / 597, 0.13))
    study.add_figure("expert_usage.png", plots.expert_usage(usage))
    study.add_table("§7 checks", ["check", "result", "measured"], [["MoE ≥ MLP on R@1", "pass", "+1.0"]])
    bodies = {}
    for name, rep in (("job-retrieve", retr), ("job-study", study)):
        for a in rep.artifacts:
            a.id = f"{name}-{a.name}"
            (tmp_path / f"fixture.json.{a.id}").write_bytes(rep.pending_files()[a.name])
        bodies[name] = rep.model_dump(mode="json")
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(bodies))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(get_method("m3_jepa.study").json_schema()))
    monkeypatch.setenv("M3_UI_FIXTURE", str(path))
    return path


def test_caption_search_then_study(fixture_file):
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.text_input(key="m3-retrieve-caption").set_value("a thin one leaning right")
    at.button(key="m3-retrieve-go").click()  # "Find digits"
    at.run()
    assert not at.exception, at.exception
    posted = [json.loads(x) for x in open(str(fixture_file) + ".posted").read().splitlines()]
    sent = posted[0]["json"]
    assert posted[0]["path"] == "/v1/m3_jepa/retrieve"
    assert (sent["caption"], sent["k"]) == ("a thin one leaning right", 8)  # k: the params model's default
    images = [e for e in at.main if getattr(e, "type", None) == "image"]
    assert len(images) == 2, "the nearest digits and the caption's routing"
    assert any("bold seven" in str(d.value.to_dict()) for d in at.dataframe)
    at.button(key="m3-submit").click()  # "Run study"
    at.run()
    assert not at.exception, at.exception
    posted = [json.loads(x) for x in open(str(fixture_file) + ".posted").read().splitlines()]
    assert posted[-1]["path"] == "/v1/m3_jepa/study" and posted[-1]["json"]["seeds"] == 3
    images = [e for e in at.main if getattr(e, "type", None) == "image"]
    assert len(images) == 4, "digits + routing + recall bars + expert usage"
