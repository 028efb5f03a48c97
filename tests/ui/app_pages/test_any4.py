"""The any4 page with a scripted API client (Streamlit's AppTest, no server, no browser).

The fake client serves a real ``any4.quantize`` report body, produced by the job on a
tiny random llama, so the page is checked against the exact JSON shape the job stores.
"""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import any4

    fixture = json.loads(open(os.environ["ANY4_UI_FIXTURE"]).read())
    schema = json.loads(open(os.environ["ANY4_UI_FIXTURE"] + ".schema").read())

    class FakeClient:
        def methods(self):
            return [{"name": "any4.quantize", "params_schema": schema}]

        def submit(self, method, params, idempotency_key=None):
            with open(os.environ["ANY4_UI_FIXTURE"] + ".submitted", "w") as f:
                json.dump({"method": method, "params": params}, f)
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def jobs(self, limit=30, method=None):
            return [{"id": "job-1", "status": "succeeded", "method": method}]

        def report(self, job_id):
            return fixture

    any4.get_client = lambda: FakeClient()
    any4.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch, data_dir):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from core.jobs import get_method, null_context
    from methods.any4 import experiment, jobs
    from methods.any4.sources import BaseModel

    torch.manual_seed(0)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=96,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            tie_word_embeddings=True,
        )
    ).eval()
    monkeypatch.setattr(
        experiment,
        "load_base",
        lambda name, **_: BaseModel("clean-llama", model, lambda t: [ord(c) % 96 for c in t], [], {}),
    )
    monkeypatch.setattr(jobs, "checkpoint_root", lambda: tmp_path / "ckpt")
    spec = get_method("any4.quantize")
    rep = spec.run(
        spec.validate({"fmt": "any4", "group_size": 32, "calibration": "none", "eval_windows": 1, "seqlen": 32}),
        null_context(),
    )
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(spec.json_schema()))
    monkeypatch.setenv("ANY4_UI_FIXTURE", str(path))
    return path, rep


def test_submit_then_table_and_lut_row_picker(fixture_file):
    path, rep = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    # the choices are the params schema's enums, the defaults its defaults
    assert at.selectbox(key="any4-fmt").options == ["int4", "int3", "int2", "nf4", "fp4", "any4", "any3", "any2"]
    assert at.selectbox(key="any4-fmt").value == "any4"
    assert at.selectbox(key="any4-group_size").options == ["32", "64", "128"]
    assert at.number_input(key="any4-seqlen").value == 256
    at.selectbox(key="any4-fmt").set_value("nf4")
    at.selectbox(key="any4-group_size").set_value(32)
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(path) + ".submitted").read())
    assert sent["method"] == "any4.quantize"
    assert sent["params"] == {
        "model": "clean-llama",
        "fmt": "nf4",
        "group_size": 32,
        "calibration": "offline",
        "eval_windows": 4,
        "seqlen": 256,
    }
    table = at.table[0].value
    assert list(table.index) == ["fp32", "any4 (uncal.)"]
    row_picker = next(s for s in at.selectbox if s.label == "Row")
    assert row_picker.options == [str(i) for i in range(16)]
    row_picker.set_value(3)
    at.run()
    assert not at.exception, at.exception
    images = [e for e in at.main if getattr(e, "type", None) == "image"]
    assert any("row 3:" in str(img.proto) for img in images)
    assert at.dataframe[0].value.loc[0, "quantized ppl"] == round(rep.metrics["ppl_quantized"], 3)
