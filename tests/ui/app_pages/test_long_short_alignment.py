"""The long-short alignment page with a scripted API client (AppTest, no server): a real ``lsa.synthetic``
report (tiny run) is served and the page shows the MSE-vs-length chart and table."""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import long_short_alignment

    base = os.environ["LSA_UI_FIXTURE"]
    fixture = json.loads(open(base).read())
    schema = json.loads(open(base + ".schema").read())

    class FakeClient:
        def methods(self):
            return [{"name": "lsa.synthetic", "params_schema": schema}]

        def submit(self, method, params, idempotency_key=None):
            with open(base + ".submitted", "w") as f:
                json.dump({"method": method, "params": params}, f)
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return fixture

    long_short_alignment.get_client = lambda: FakeClient()
    long_short_alignment.render()


def test_submit_synthetic_then_curve(tmp_path, monkeypatch):
    from core.jobs import get_method, null_context

    spec = get_method("lsa.synthetic")
    rep = spec.run(
        spec.validate({"task": "length", "pe": "learned", "steps": 3, "eval_per_length": 10}), null_context()
    )
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": rep.title, "body": rep.model_dump(mode="json"), "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(spec.json_schema()))
    monkeypatch.setenv("LSA_UI_FIXTURE", str(path))
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    sent = json.loads(open(str(path) + ".submitted").read())
    assert sent["method"] == "lsa.synthetic"
    assert at.table, "the MSE table is shown"
    assert rep.data["mse"]["50"] is None  # learned positions refuse l = 50


def _app_kind():
    import json
    import os

    from ui.app_pages import long_short_alignment

    base = os.environ["LSA_UI_FIXTURE"]
    fixture = json.loads(open(base).read())
    method = os.environ["LSA_UI_METHOD"]

    class FakeClient:
        def methods(self):
            return [{"name": method, "params_schema": {"type": "object", "properties": {}}}]

        def submit(self, method, params, idempotency_key=None):
            return {"id": "job-2"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return fixture

    long_short_alignment.get_client = lambda: FakeClient()
    kinds = {v: k for k, v in long_short_alignment.METHODS.items()}
    import streamlit as st

    st.session_state.setdefault("lsa-kind", kinds[method])
    long_short_alignment.render()


def _lm_run(variant, alpha, l_train):
    lengths = (l_train, 2 * l_train, 4 * l_train)
    ppl = {
        f"{s}@{k}": {"ppl": 10.0 + k / 100 + alpha, "ppl_last": 11.0, "nll": 2.3}
        for s in ("heldout", "wikitext2")
        for k in lengths
    }
    return {
        "variant": variant,
        "alpha": alpha,
        "step": 2,
        "l_train": l_train,
        "misalign": {"sce": 5.0 - alpha, "skl": 0.01},
        "train_loss": 2.0,
        "ppl": ppl,
    }


@pytest.mark.parametrize("method", ["lsa.lm", "lsa.smollm2"])
def test_lm_variants_and_smollm2_views(tmp_path, monkeypatch, method):
    if method == "lsa.lm":
        data = {"runs": [_lm_run(v, a, lt) for v, lt in (("b1", 16), ("b2", 32)) for a in (0.0, 0.1)]}
    else:
        stat = {"mean": 0.1, "se": 0.01}
        keys = ("sce", "skl", "skl_same", "skl_shuffled", "h_long", "h_short")
        data = {"model": "smollm2-135m-instruct", "l_train": 64, "n_samples": 4, "summary": {k: stat for k in keys}}
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"title": "t", "body": {"data": data}, "markdown": ""}))
    monkeypatch.setenv("LSA_UI_FIXTURE", str(path))
    monkeypatch.setenv("LSA_UI_METHOD", method)
    at = streamlit_testing.AppTest.from_function(_app_kind, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    if method == "lsa.lm":
        assert len(at.table) == 2, "one table per stage-B variant"
        assert any("B2" in c.value for c in at.caption)
    else:
        assert len(at.table) == 1 and any("same input twice" in str(t.value) for t in at.table)
