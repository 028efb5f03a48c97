"""The DOR, LMS3, PAE and DEFAME pages (Streamlit's AppTest, a recording fake of the API client with the real
params schemas): their forms come from the params models, submit the model's defaults on the button, show the
API's refusal one sentence per field, and announce a first-use model training before the click."""

from __future__ import annotations

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import importlib
    import json
    import os

    import streamlit as st

    from ui.client import ApiError

    page = importlib.import_module(f"ui.app_pages.{st.session_state['page']}")
    out = os.environ["SCHEMA_PAGES_OUT"]

    class FakeClient:
        def methods(self):
            from core.jobs import get_method, load_all

            load_all()
            names = ("dor.tune", "lms3.select", "lms3.index", "pae.train", "defame.check")
            return [{"name": n, "params_schema": get_method(n).json_schema()} for n in names]

        def readiness(self, method, params):
            if method == "dor.tune":
                return {"ready": False, "notice": "This dor.tune job first trains the default tiny CLIP (about 105 s)."}
            return {"ready": True}

        def _record(self, path, body):
            with open(out, "a") as f:
                f.write(json.dumps({"path": path, "body": body}) + "\n")
            if st.session_state.get("refuse"):
                raise ApiError(
                    422,
                    {"message": "invalid", "errors": [{"loc": ["epochs"], "msg": "Input should be less than 1000"}]},
                )
            return {"id": "job-1"}

        def submit(self, method, params, idempotency_key=None):
            return self._record("/v1/jobs", {"method": method, "params": params})

        def post(self, path, json=None, files=None, data=None):
            return self._record(path, json if json is not None else data)

        def get(self, path, **params):
            if path == "/v1/evidence":
                return {"chunks": 0, "images": 0, "search_backend": "chroma", "backend_ready": True}
            return []

        def jobs(self, limit=30, method=None):
            return []

        def job(self, job_id):
            return {"id": job_id, "status": "running", "progress": 0.1, "message": "training the default tiny CLIP"}

        def report(self, job_id):
            return {"title": "t", "markdown": "", "body": {"title": "t"}}

    page.get_client = lambda: FakeClient()
    page.render()


def _run(page, tmp_path, monkeypatch, **state):
    out = tmp_path / "sent.jsonl"
    monkeypatch.setenv("SCHEMA_PAGES_OUT", str(out))
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.session_state["page"] = page
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    return at, out


def _sent(out):
    return [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []


def test_dor_submits_the_models_defaults_and_announces_the_clip_training(tmp_path, monkeypatch):
    from core.jobs import get_method

    at, out = _run("dor", tmp_path, monkeypatch)
    assert [i.value for i in at.info] == ["This dor.tune job first trains the default tiny CLIP (about 105 s)."]
    epochs = get_method("dor.tune").params_model.model_fields["epochs"].default
    assert at.number_input(key="dor-epochs").value == epochs  # one default: the params model's
    at.button(key="dor-submit").click().run()
    (sent,) = _sent(out)
    assert sent["body"]["method"] == "dor.tune" and sent["body"]["params"]["epochs"] == epochs


def test_a_refusal_is_one_sentence_per_field(tmp_path, monkeypatch):
    at, out = _run("dor", tmp_path, monkeypatch, refuse=True)
    at.button(key="dor-submit").click().run()
    assert not at.exception, at.exception
    (err,) = [e.value for e in at.error]
    assert "epochs: Input should be less than 1000" in err and "{" not in err


def test_lms3_select_and_generate_from_the_schema(tmp_path, monkeypatch):
    at, out = _run("lms3", tmp_path, monkeypatch)
    assert at.text_input(key="lms3-query").value.startswith("Sara has")
    at.number_input(key="lms3-k").set_value(2).run()
    at.button(key="lms3-generate").click().run()
    assert not at.exception, at.exception
    (sent,) = _sent(out)
    params = sent["body"]["params"]
    assert sent["body"]["method"] == "lms3.select" and params["generate"] is True and params["k"] == 2
    assert params["dataset"] == "mawps" and params["arm"] == "lms3"
    at.number_input(key="lms3-l").set_value(2.0).run()  # l is a fraction: out of range blocks both buttons
    assert at.button(key="lms3-select").disabled and at.button(key="lms3-generate").disabled


def test_pae_start_form_sends_every_field_of_the_model(tmp_path, monkeypatch):
    from core.jobs import get_method

    at, out = _run("pae", tmp_path, monkeypatch)
    at.button(key="pae-start-submit").click().run()
    (sent,) = _sent(out)
    assert sent["path"] == "/v1/webagent/runs"
    body = sent["body"]
    assert body["train_sites"] == ["shop", "recipes", "dictionary", "map"] and body["heldout_sites"] == ["news"]
    model = get_method("pae.train").params_model
    assert body["iterations"] == model.model_fields["iterations"].default
    get_method("pae.train").validate(body)


def test_defame_blocks_an_empty_claim_and_sends_the_form(tmp_path, monkeypatch):
    at, out = _run("defame", tmp_path, monkeypatch)
    assert at.button(key="defame-go").disabled
    assert any("Claim: enter the claim to check." in c.value for c in at.caption)
    at.text_input(key="defame-claim").set_value("The moon is made of cheese.").run()
    at.button(key="defame-go").click().run()
    (sent,) = _sent(out)
    assert sent["path"] == "/v1/factcheck" and sent["body"]["claim"] == "The moon is made of cheese."
    assert sent["body"]["max_iterations"] == "3"
