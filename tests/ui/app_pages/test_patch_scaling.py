"""The patch-scaling page with a scripted API client (Streamlit's AppTest): form → sweep route, curve, drill-down."""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import os

    from ui.app_pages import patch_scaling
    from ui.testing import ScriptedClient

    patch_scaling.get_client = lambda: ScriptedClient(os.environ["PS_UI_FIXTURE"], "patch_scaling.sweep")
    patch_scaling.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    from core.jobs import get_method, null_context

    spec = get_method("patch_scaling.sweep")
    params = {"backbones": ["vit"], "patches": [8, 4], "epochs": 1, "dispatch": "inline"}
    rep = spec.run(spec.validate(params), null_context())
    png = rep.pending_files()["scaling.png"]
    for a in rep.artifacts:
        a.id = f"art-{a.name}"
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(spec.json_schema()))
    (tmp_path / "fixture.json.png").write_bytes(png)
    (tmp_path / "fixture.json.get.json").write_text(
        json.dumps(
            {
                "/v1/patch_scaling/paper": [
                    {"model": "Adventurer-Base", "patch": 1, "input": 224, "tokens": 50176, "top1": 84.6}
                ]
            }
        )
    )
    monkeypatch.setenv("PS_UI_FIXTURE", str(path))
    return path, rep


def test_run_sweep_then_curve_and_drill_down(fixture_file):
    path, rep = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("model" in d.value.columns and "Adventurer-Base" in set(d.value["model"]) for d in at.dataframe), (
        "the paper's numbers are shown"
    )
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    posted = json.loads(open(str(path) + ".posted").read())
    assert posted["path"] == "/v1/patch_scaling/sweep" and posted["json"]["patches"] == [8, 4, 2, 1]
    assert [e for e in at.main if getattr(e, "type", None) == "image"], "the scaling curve is shown"
    assert at.selectbox(key="ps-p").options == ["8", "4"]
    at.selectbox(key="ps-p").set_value(4)
    at.run()
    frames = [d.value for d in at.dataframe]
    drill = next(f for f in frames if "seed" in f.columns)
    assert list(drill["tokens"]) == [4]
