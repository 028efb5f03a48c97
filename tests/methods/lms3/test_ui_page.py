"""The LMS3 page with a scripted API client (Streamlit's AppTest, no server, no browser).

The fake client answers ``/v1/lms3/select`` with real selection results computed by the
library (tiny random llama, ephemeral Chroma), so the page is checked against the exact
JSON shape the API returns.
"""

from __future__ import annotations

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import lms3

    fixture = json.loads(open(os.environ["LMS3_UI_FIXTURE"]).read())
    log = os.environ["LMS3_UI_FIXTURE"] + ".calls"

    class FakeClient:
        def methods(self):
            from core.jobs import get_method, load_all

            load_all()
            return [{"name": n, "params_schema": get_method(n).json_schema()} for n in ("lms3.select", "lms3.index")]

        def _log(self, *call):
            with open(log, "a") as f:
                f.write(json.dumps(call) + "\n")

        def get(self, path, **params):
            return fixture["pools"]

        def post(self, path, json=None, files=None, data=None):
            self._log("post", path, json)
            if path.endswith("/select"):
                return fixture["rejected"] if json["l"] < 0.5 else fixture["kept"]
            return {"id": "job-index"}

        def submit(self, method, params, idempotency_key=None):
            self._log("submit", method, params)
            return {"id": "job-gen"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return {"body": {"data": {**fixture["kept"], "completion": "The answer is 46.0"}}}

    lms3.get_client = lambda: FakeClient()
    lms3.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch, tiny_llama_dir, ephemeral_store, data_dir):
    from methods.lms3 import Lms3Service, PoolSpec, SelectionConfig
    from ui.app_pages.lms3 import EXAMPLE

    svc = Lms3Service(model_name=str(tiny_llama_dir), store=ephemeral_store)
    spec = PoolSpec("mawps", 12, seed=0)
    svc.index(spec)
    kept = svc.select(EXAMPLE, spec, selection=SelectionConfig(k=2, l=1.0)).to_dict()
    rejected = svc.select(EXAMPLE, spec, selection=SelectionConfig(k=2, l=0.01)).to_dict()
    assert rejected["rejected"] and not kept["rejected"]
    path = tmp_path / "fixture.json"
    path.write_text(
        json.dumps(
            {
                "kept": kept,
                "rejected": rejected,
                "pools": [{"pool": "mawps-full", "mode": "reference", "layer": "final_norm_output", "items": 1537}],
            }
        )
    )
    monkeypatch.setenv("LMS3_UI_FIXTURE", str(path))
    return path, kept


def _calls(path):
    try:
        return [json.loads(line) for line in open(str(path) + ".calls")]
    except FileNotFoundError:
        return []


def test_select_shows_scores_prompt_and_rejection(fixture_file):
    path, kept = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("is indexed (1537 items)" in c.value for c in at.caption)
    at.button(key="lms3-select").click()
    at.run()
    assert not at.exception, at.exception
    assert any("Rejection fired" in w.value for w in at.warning)
    assert any(c.value.startswith("Let's think step by step: ") for c in at.code)
    sent = _calls(path)[-1]
    assert (
        sent[1] == "/v1/lms3/select" and sent[2]["dataset"] == "mawps" and sent[2].get("pool_size") is None
    )  # absent: the API default, the full pool

    at.number_input(key="lms3-l").set_value(1.0)
    at.number_input(key="lms3-k").set_value(2)
    at.button(key="lms3-select").click()
    at.run()
    assert not at.exception, at.exception
    assert any("2 demonstration(s) kept" in s.value for s in at.success)
    df = at.dataframe[0].value
    assert list(df["pool index"]) == [d["index"] for d in kept["candidates"]]
    assert df["Score"].is_monotonic_increasing and list(df["kept"]) == [True, True]
    assert any(c.value.startswith("Here are some examples you can refer to.") for c in at.code)


def test_unindexed_pool_offers_indexing_and_generation_runs_a_job(fixture_file):
    path, _ = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    at.number_input(key="lms3-pool-pool_size").set_value(300)
    at.run()
    assert any("not indexed yet" in i.value for i in at.info)
    at.button(key="lms3-index").click()
    at.run()
    assert not at.exception, at.exception
    assert ["post", "/v1/lms3/index", {"dataset": "mawps", "pool_size": 300, "seed": 0}] in _calls(path)
    at.button(key="lms3-generate").click()
    at.run()
    assert not at.exception, at.exception
    gen = [c for c in _calls(path) if c[0] == "submit"][-1]
    assert gen[1] == "lms3.select" and gen[2]["generate"] is True
    at.run()
    assert any(c.value == "The answer is 46.0" for c in at.code)
