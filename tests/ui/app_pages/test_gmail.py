"""The GMAIL page with a scripted API client (Streamlit's AppTest): preview, form → align route, embedding map."""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import os

    from ui.app_pages import gmail
    from ui.testing import ScriptedClient

    gmail.get_client = lambda: ScriptedClient(os.environ["GM_UI_FIXTURE"], "gmail.align")
    gmail.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    from core.jobs import get_method, null_context

    spec = get_method("gmail.align")
    params = {"backbone": "test", "n_train": 64, "n_test": 32, "stage1_steps": 2, "stage2_steps": 1,
              "caption_steps": 0, "batch_size": 16}  # fmt: skip
    rep = spec.run(spec.validate(params), null_context())
    png = rep.pending_files()["embeddings.png"]
    for a in rep.artifacts:
        a.id = f"art-{a.name}"
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(spec.json_schema()))
    (tmp_path / "fixture.json.png").write_bytes(png)
    monkeypatch.setenv("GM_UI_FIXTURE", str(path))
    return path, rep


def test_run_then_embedding_map_and_tables(fixture_file):
    path, rep = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.button(key="gm-preview").click()
    at.run()
    assert "/v1/gmail/pairs.png?count=8&strengths=0.5,1.0,1.5" == open(str(path) + ".preview").read()
    submit = next(b for b in at.button if b.label == "Run GMAIL")
    submit.click()
    at.run()
    assert not at.exception, at.exception
    posted = json.loads(open(str(path) + ".posted").read())
    assert posted["path"] == "/v1/gmail/align" and posted["json"]["artifact_strength"] == 1.0
    assert posted["json"]["rank"] == 4 and posted["json"]["tau"] == 0.07
    radio = at.radio(key="gm-panel")
    assert radio.options == [
        "without alignment (generated through f_r)",
        "dual encoder, no L_align",
        "GMAIL (generated through aligned f_g)",
    ]
    radio.set_value("gmail")
    at.run()
    assert not at.exception, at.exception
    types = [getattr(e, "type", None) for e in at.main]
    assert "vega_lite_chart" in types, "the real-vs-generated scatter is drawn"
    assert "image" in types, "the embedding map picture is shown"
    frames = [d.value for d in at.dataframe]
    assert any("paired cosine (real, gen)" in f.columns for f in frames)
