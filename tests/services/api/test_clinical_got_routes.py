"""``/v1/clinical``: the graph's shape, cases, slice PNGs, validation, job submission."""

from __future__ import annotations


def test_graph_cases_detail_and_slices(api_client):
    g = api_client.get("/v1/clinical/graph").json()
    assert ["n3", "n4"] in g["cgot"] and ["n3", "n4"] not in g["direct"] and len(g["nodes"]) == 6
    cases = api_client.get("/v1/clinical/cases", params={"n_cases": 5, "limit": 3}).json()
    assert [c["case_id"] for c in cases] == ["case000", "case001", "case002"]
    d = api_client.get("/v1/clinical/cases/case002", params={"n_cases": 5}).json()
    assert len(d["qa"]) == 6 and d["slices"] == list(range(7, 17)) and "blue" in d["findings"]
    r = api_client.get("/v1/clinical/cases/case002/slices/10/zmap", params={"n_cases": 5})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content[:4] == b"\x89PNG"


def test_bad_input_is_a_4xx(api_client):
    assert api_client.get("/v1/clinical/cases/case009", params={"n_cases": 5}).status_code == 404
    assert api_client.get("/v1/clinical/cases/case002/slices/2/adc", params={"n_cases": 5}).status_code == 404
    assert api_client.get("/v1/clinical/cases/case002/slices/10/foo", params={"n_cases": 5}).status_code == 422
    assert api_client.get("/v1/clinical/cases/../etc", params={"n_cases": 5}).status_code in (404, 422)
    assert api_client.get("/v1/clinical/cases", params={"n_cases": 10**6}).status_code == 422
    bad = api_client.post("/v1/clinical/trace", json={"case_id": "case001", "oracle_nodes": ["n7"]})
    assert bad.status_code == 422
    assert api_client.post("/v1/clinical/runs", json={"n_cases": 0}).status_code == 422


def test_trace_and_run_are_submitted_as_jobs(api_client):
    r = api_client.post("/v1/clinical/trace", json={"case_id": "case001", "n_cases": 5, "oracle_nodes": ["n1"]})
    assert r.status_code == 201 and r.json()["method"] == "clinical_got.case"
    r = api_client.post("/v1/clinical/runs", json={"n_cases": 2, "mode": "direct"})
    assert r.status_code == 201 and r.json()["method"] == "clinical_got.run"


def test_no_key_no_access(api_client):
    from fastapi.testclient import TestClient

    from services.api.main import create_app

    with TestClient(create_app()) as anon:
        assert anon.get("/v1/clinical/graph").status_code == 401
