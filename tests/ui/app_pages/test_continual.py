"""The continual-learning page with a scripted API client (Streamlit's AppTest, no server, no browser).

The client returns a real report body produced by the harness (toy learner), so the page is
checked against the exact JSON shape ``continual.run`` stores.
"""

import json

import pytest
from pydantic import BaseModel

from methods.continual.data import LabelledSplit, register_dataset
from methods.continual.harness import run_experiment
from methods.continual.learner import ContinualLearner, register_learner
from methods.continual.report import experiment_report

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


class _Opts(BaseModel):
    pass


class _Recent(ContinualLearner):
    """Predicts the first class of the latest task: old classes are always wrong."""

    heads = ("first", "second")

    def __init__(self):
        self.latest = 0

    def learn_task(self, task, progress):
        self.latest = task.classes[0]

    def predict(self, x, head=None):
        import numpy as np

        return np.full(len(x), self.latest if head != "second" else 0)


@register_learner("ui_toy", options=_Opts, heads=_Recent.heads, presets={"quick": {}})
def _make(options, *, seed, stream):
    return _Recent()


def _tiny_split():
    import numpy as np

    x = np.arange(24, dtype=np.float32).reshape(12, 2)
    y = np.arange(12) % 4
    return LabelledSplit(x, y, x.copy(), y.copy(), name="ui_tiny")


register_dataset("ui_tiny", _tiny_split)


def _app():
    import json
    import os

    from ui.app_pages import continual

    fixture = json.loads(open(os.environ["CONTINUAL_UI_FIXTURE"]).read())

    class FakeClient:
        submitted = []

        def methods(self):
            from core.jobs import get_method

            return [{"name": "continual.run", "params_schema": get_method("continual.run").json_schema()}]

        def get(self, path, **params):
            return fixture["methods"] if path.endswith("/methods") else ["digits", "ui_tiny"]

        def submit(self, method, params, idempotency_key=None):
            with open(os.environ["CONTINUAL_UI_FIXTURE"] + ".submitted", "w") as f:
                json.dump({"method": method, "params": params}, f)
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "seed 1/1 task 2/2 done"}

        def report(self, job_id):
            return fixture["report"]

        def artifact(self, artifact_id):
            return fixture["png"].encode("latin-1")

        def cancel(self, job_id):
            return {}

    continual.get_client = lambda: FakeClient()
    continual.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    exp = run_experiment("ui_toy", seeds=[1], dataset="ui_tiny", classes_per_task=2)
    report = experiment_report(exp)
    png = report.pending_files()["run_matrix.png"]
    for a in report.artifacts:
        report.mark_stored(a.name, f"id-{a.name}")
    data = {
        "methods": [
            {
                "name": "ui_toy",
                "description": "toy",
                "heads": ["first", "second"],
                "presets": {"quick": {}},
                "options_schema": {},
            }
        ],
        "report": {"title": report.title, "body": report.model_dump(mode="json"), "markdown": ""},
        "png": png.decode("latin-1"),
    }
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(data))
    monkeypatch.setenv("CONTINUAL_UI_FIXTURE", str(path))
    return path


def test_submit_then_results_with_old_new_gap_and_matrix(fixture_file):
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox[0].value == "ui_toy"
    at.number_input(key="continual-seeds").set_value(2)
    at.number_input(key="continual-samples_per_class").set_value(3)
    at.button(key="continual-go").click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(fixture_file) + ".submitted").read())
    assert sent == {
        "method": "continual.run",
        "params": {
            "method": "ui_toy",
            "dataset": "digits",
            "seeds": 2,
            "first_seed": 1993,
            "options": {},
            "classes_per_task": 2,
            "samples_per_class": 3,
            "threads": 1,
        },
    }
    table = at.table[0].value
    assert list(table.index) == ["first", "second"]
    # 'first' is right only on the newest task's first class: old classes 0 %, new classes 50 %
    assert table.loc["first", "old acc (%)"] == "0.0 ± 0.0" and table.loc["first", "new acc (%)"] == "50.0 ± 0.0"
    assert any("Old vs new" in m.value for m in at.markdown)
    matrix = at.dataframe[0].value
    assert matrix.shape == (2, 2)
    # the task not learnt yet is a blank cell, not "None"/NaN
    assert matrix.iloc[0, 1] == "—" and "None" not in matrix.to_string() and "nan" not in matrix.to_string()
    # the report is headed by the method's own arm, with a few readable metrics
    assert not [k for k in json.loads(open(str(fixture_file)).read())["report"]["body"]["metrics"] if "." in k]
