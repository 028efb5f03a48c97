"""The SEFE page with a scripted API client (Streamlit's AppTest): form → run route, matrices, forgotten answers."""

import json
import math

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import os

    from ui.app_pages import sefe
    from ui.testing import ScriptedClient

    sefe.get_client = lambda: ScriptedClient(os.environ["SEFE_UI_FIXTURE"], "sefe.run")
    sefe.render()


def _run(seed, last_style_ok):
    """Two tasks; after task 2 the iris answers are 'Yes' (superficially forgotten) unless last_style_ok."""
    from methods.continual.task_incremental import TIRun

    nan = math.nan
    bad = {
        "prompt": "An iris flower: sepal length 5.1 cm.\nWhich iris species is it?",
        "output": "Yes",
        "answer": "setosa",
        "compliant": False,
        "correct": False,
    }
    good = dict(bad, output="setosa", compliant=True, correct=True)
    return TIRun(
        seed=seed,
        tasks=["iris", "cancer"],
        matrices={
            "accuracy": [[0.8, nan], [0.7 if last_style_ok else 0.0, 0.9]],
            "compliance": [[1.0, nan], [1.0 if last_style_ok else 0.05, 1.0]],
            "essential": [[0.8, nan], [0.7 if last_style_ok else 0.0, 0.9]],
        },
        diagnostics=[{}, {"key_mag": 1e-4 if last_style_ok else 1e-3, "free_mag": 1e-3}],
        examples=[{"iris": [good]}, {"iris": [good if last_style_ok else bad], "cancer": []}],
    )


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from core.jobs import get_method
    from methods.continual.task_incremental import TIExperiment
    from methods.sefe.config import preset_config
    from methods.sefe.report import build_report

    cfg = preset_config("tiny", arms=["seq", "asd"], seeds=[0, 1])
    exps = {
        "seq": TIExperiment("seq", ["iris", "cancer"], [_run(0, False), _run(1, False)]),
        "asd": TIExperiment("asd", ["iris", "cancer"], [_run(0, True), _run(1, True)]),
    }
    rep = build_report(cfg, exps)
    png = rep.pending_files()["accuracy_matrix.png"]
    for a in rep.artifacts:
        a.id = f"art-{a.name}"
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(get_method("sefe.run").json_schema()))
    (tmp_path / "fixture.json.png").write_bytes(png)
    (tmp_path / "fixture.json.get.json").write_text(
        json.dumps(
            {
                "/v1/sefe/asd": {
                    "task": "iris",
                    "n": 40,
                    "counts": {"SA": 32, "YN": 2, "MCQ": 2, "BE": 2, "DE": 2},
                    "examples": [
                        {"style": "YN", "prompt": "Is it an iris setosa?\nAnswer with yes or no.", "answer": "Yes"}
                    ],
                }
            }
        )
    )
    monkeypatch.setenv("SEFE_UI_FIXTURE", str(path))
    return path, rep


def test_run_then_matrices_and_forgotten_answers(fixture_file):
    path, rep = fixture_file
    rows = next(t for t in rep.tables if "§7" in t.title).rows
    # an expected direction's result is the verdict of its interval over seeds (core.evidence), not PASS/FAIL
    asd = [row[1] for row in rows if row[0].startswith("With ASD, task 1's compliance after task 2 stays near")]
    assert asd == ["holds"]
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Is it an iris setosa?" in c.value for c in at.code), "the ASD preview shows the rewritten examples"
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    posted = json.loads(open(str(path) + ".posted").read())
    assert posted["path"] == "/v1/sefe/run" and posted["json"]["tasks"] == ["iris", "cancer"]
    assert [e for e in at.main if getattr(e, "type", None) == "image"], "the matrices are shown"
    assert at.selectbox(key="sefe-arm").options == ["seq", "asd"]
    frames = [d.value for d in at.dataframe]
    matrix = next(f for f in frames if list(f.columns) == ["iris", "cancer"])
    assert matrix.iloc[1, 0] == 0.0 and matrix.iloc[0, 0] == 80.0
    forgotten = next(f for f in frames if "answer" in f.columns and "expected" in f.columns and "seed" in f.columns)
    assert set(forgotten["answer"]) == {"Yes"} and len(forgotten) == 2
    at.selectbox(key="sefe-arm").set_value("asd")
    at.run()
    assert not at.exception, at.exception
    assert not [d.value for d in at.dataframe if "seed" in d.value.columns]  # no forgotten answers with ASD
