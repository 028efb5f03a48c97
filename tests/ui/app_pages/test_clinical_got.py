"""The Clinical GoT page with a scripted API client (AppTest): slices, ground truth, a trace drawn as a graph.

The fake client serves real data: the case list and detail built by the benchmark code, real slice PNGs, and the
report of a real ``clinical_got.case`` job (all nodes answered by the oracle, so no model is needed).
"""

import json

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import json
    import os

    from ui.app_pages import clinical_got

    base = os.environ["CGOT_UI_FIXTURE"]
    fx = json.loads(open(base).read())

    class FakeClient:
        def methods(self):
            from core.jobs import get_method

            return [
                {"name": m, "params_schema": get_method(m).json_schema()}
                for m in ("clinical_got.case", "clinical_got.run")
            ]

        def get(self, path, **params):
            if path == "/v1/clinical/cases":
                return fx["cases"]
            return fx["detail"]

        def get_bytes(self, path):
            return open(fx["png"], "rb").read()

        def post(self, path, json=None, files=None, data=None):
            import json as _json

            with open(base + ".posted", "w") as f:
                _json.dump({"path": path, "json": json}, f)
            return {"id": "job-1"}

        def job(self, job_id):
            return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

        def report(self, job_id):
            return fx["report"]

    clinical_got.get_client = lambda: FakeClient()
    clinical_got.render()


@pytest.fixture
def fixture_file(tmp_path, monkeypatch):
    from agents.clinical_got.jobs import CaseParams, case_job
    from core.jobs import null_context
    from methods.clinical_got.bench import prepare_case, qa_items
    from methods.clinical_got.config import BenchConfig

    bench = BenchConfig(n_cases=5)
    case = prepare_case(bench, "case002")
    params = CaseParams(case_id="case002", n_cases=5, oracle_nodes=["n1", "n2", "n3", "n4"])
    rep = case_job(params, null_context())
    fx = {
        "cases": [{"case_id": c, "grade": prepare_case(bench, c).truth["grade"]} for c in bench.case_ids()],
        "detail": {
            "case_id": "case002",
            "truth": case.truth,
            "qa": qa_items("case002", case.truth),
            "findings": case.findings,
            "slices": [t["slice"] for t in case.triples],
        },
        "png": case.triples[3]["zmap"],
        "report": {"title": rep.title, "body": rep.model_dump(mode="json")},
    }
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(fx))
    monkeypatch.setenv("CGOT_UI_FIXTURE", str(path))
    return path, rep


def test_case_slices_trace_graph_and_submission(fixture_file):
    path, rep = fixture_file
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("image")) == 3  # the slice triple (in three columns)
    at.selectbox(key="cgot-case").set_value("case002")
    at.session_state["clinical_got_trace_job"] = "job-1"
    at.button(key="cgot-trace").click()
    at.run()
    assert not at.exception, at.exception
    posted = json.loads(open(str(path) + ".posted").read())
    assert posted["path"] == "/v1/clinical/trace" and posted["json"]["case_id"] == "case002"
    frames = [d.value for d in at.dataframe]
    trace = next(f for f in frames if "truth" in f.columns)
    assert list(trace["node"]) == ["n1", "n2", "n2_5", "n3", "n4", "n5"]
    assert (trace["source"][:2] == "oracle").all()
    (chart,) = at.get("graphviz_chart")
    assert "n3 -> n4" in chart.proto.spec and "N4 2-year outcome" in chart.proto.spec
