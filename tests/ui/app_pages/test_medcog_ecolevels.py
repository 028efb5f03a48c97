"""The MultiCogEval and EcoLevels pages with a scripted API client (Streamlit's AppTest, no server).

The clients return report bodies built by the real report builders, so the pages are checked against the
exact JSON the jobs store.
"""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _medcog_app():
    import json
    import os

    from ui.app_pages import medcog

    fx = json.loads(open(os.environ["P24_UI_FIXTURE"]).read())

    class FakeClient:
        def methods(self):
            return fx["methods"]

        def submit(self, method, params, idempotency_key=None):
            with open(os.environ["P24_UI_FIXTURE"] + ".submitted", "w") as f:
                json.dump({"method": method, "params": params}, f)
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return {"title": "r", "body": fx["medcog"], "markdown": ""}

        def cancel(self, job_id):
            return {}

    medcog.get_client = lambda: FakeClient()
    medcog.render()


def _eco_app():
    import json
    import os

    from ui.app_pages import ecolevels

    fx = json.loads(open(os.environ["P24_UI_FIXTURE"]).read())

    class FakeClient:
        def methods(self):
            from core.jobs import get_method

            return [{"name": "ecolevels.run", "params_schema": get_method("ecolevels.run").json_schema()}]

        def get(self, path, **params):
            return fx["probes"] if path.endswith("/probes") else fx["targets"]

        def post(self, path, json=None, files=None, data=None):
            if path.endswith("/classify"):
                return {"level": "L2", "ev": 0.2, "ev_band": "low"}
            with open(os.environ["P24_UI_FIXTURE"] + ".submitted", "w") as f:
                import json as _j

                _j.dump({"path": path, "params": json}, f)
            return {"id": "job-2"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return {"title": "r", "body": fx["eco"], "markdown": ""}

        def cancel(self, job_id):
            return {}

    ecolevels.get_client = lambda: FakeClient()
    ecolevels.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch, data_dir):
    from agents.medcog.jobs import MedcogOptions
    from agents.medcog.simulate import HighParams
    from core.jobs import get_method, load_all
    from methods.ecolevels.reconcile import predict, reconcile
    from methods.ecolevels.registry import load_probes
    from methods.ecolevels.report import build_report as eco_report
    from methods.ecolevels.result import ProbeResult
    from methods.ecolevels.validity import RESUME_SCREENER, TARGETS
    from methods.medcog.highlevel import Episode, summarise
    from methods.medcog.lowmid import LowMidParams
    from methods.medcog.report import ModelResult, build_report
    from methods.medcog.scoring import TaskScore, level_scores

    load_all()
    scores = [
        TaskScore("medqa", t, 0.2 if t in ("MCQ", "MR") else 0.5, [0.5, 0.6], 0.55, 0.05, 0.4, 0.06, 2)
        for t in ("MCQ", "SV", "AE", "MR")
    ]

    class LM:  # the LowMidResult fields the report reads
        pass

    lm = LM()
    lm.scores, lm.levels, lm.examples, lm.run_id = scores, level_scores(scores), [], "run-1"
    ep = Episode(
        "sepsis-0",
        "Sepsis",
        "Sepsis",
        True,
        {"lab": 1.0, "micro": 0.5, "imaging": None},
        0.75,
        6,
        ["PE", "LAB"],
        transcript=[{"role": "user", "content": "history"}, {"role": "assistant", "content": "Action: PE"}],
    )
    mres = ModelResult("m", "local/m", "model", lowmid=lm, high=summarise({2024: [ep]}), episodes=[ep])
    med = build_report([mres], skipped={}, options=MedcogOptions(preset="tiny").model_dump(), command="c", wall_s=1.0)
    results = [
        ProbeResult(
            probe_id="winobias",
            name="WinoBias",
            construct_key="g",
            level="L2",
            effect=0.5,
            ci_low=0.3,
            ci_high=0.7,
            n_units=8,
            ev=0.2,
        ),
        ProbeResult(
            probe_id="resume_screening",
            name="Résumé",
            construct_key="g",
            level="L4",
            effect=0.0,
            ci_low=-0.1,
            ci_high=0.1,
            n_units=8,
            ev=0.8,
        ),
    ]
    eco = eco_report(
        model="m",
        target=RESUME_SCREENER,
        results=results,
        conflicts=reconcile(results),
        predictions=[predict(r, RESUME_SCREENER) for r in results],
        selection=[],
    )
    methods = [
        {"name": "medcog.lowmid", "params_schema": get_method("medcog.lowmid").json_schema()},
        {"name": "medcog.high", "params_schema": get_method("medcog.high").json_schema()},
    ]
    assert LowMidParams and HighParams
    fx = {
        "methods": methods,
        "medcog": med.model_dump(mode="json"),
        "eco": eco.model_dump(mode="json"),
        "probes": [p.model_dump(mode="json", by_alias=True) for p in load_probes(from_db=False)],
        "targets": {k: t.model_dump() for k, t in TARGETS.items()},
    }
    path = tmp_path / "fx.json"
    path.write_text(json.dumps(fx))
    monkeypatch.setenv("P24_UI_FIXTURE", str(path))
    return path


def test_medcog_page_submits_and_shows_levels_tasks_and_episodes(fixture_file):
    at = streamlit_testing.AppTest.from_function(_medcog_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    at.button[0].click()  # "Evaluate" with the schema defaults
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(fixture_file) + ".submitted").read())
    assert sent["method"] == "medcog.lowmid" and sent["params"]["repeats"] == 5
    assert any("Per task" in m.value for m in at.markdown)
    assert at.selectbox(key="medcog-episode").value == 0
    assert len(at.get("image")) >= 1


def test_ecolevels_page_shows_registry_grid_conflicts(fixture_file):
    at = streamlit_testing.AppTest.from_function(_eco_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    at.button(key="ecolevels-submit").click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(fixture_file) + ".submitted").read())
    assert sent["path"] == "/v1/ecolevels/runs" and sent["params"]["target"] == "resume_screener"
    assert any("R1" in m.value for m in at.markdown)
    assert any("likely to generalise" in m.value or "indicates risk" in m.value for m in at.markdown)
