"""``POST /v1/sdr/fit``: a CSV upload becomes a ``nonlinear_sdr.fit`` job; bad tables are a 422 before queueing."""

from __future__ import annotations

import numpy as np

from core.jobs.lifecycle import execute_job


def _csv(n: int = 90) -> bytes:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3))
    y = np.where(x[:, 0] + x[:, 1] > 0, "yes", "no")
    rows = ["u,v,w,label"] + [f"{a:.4f},{b:.4f},{c:.4f},{t}" for (a, b, c), t in zip(x, y)]
    return "\n".join(rows).encode()


def test_fit_form_fields_come_from_the_params_model(api_client):
    from methods.nonlinear_sdr.jobs import FitParams

    schema = api_client.get("/openapi.json").json()

    def props_of(node: dict) -> dict:
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
        out = dict(node.get("properties", {}))
        for part in node.get("allOf", []):
            out.update(props_of(part))
        return out

    props = props_of(schema["paths"]["/v1/sdr/fit"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"])
    assert set(props) == set(FitParams.model_fields) - {"dataset", "csv_sha256"} | {"table"}
    assert props["method"]["default"] == "kernel"


def test_upload_runs_and_reports(api_client):
    r = api_client.post(
        "/v1/sdr/fit",
        files={"table": ("t.csv", _csv(), "text/csv")},
        data={"response": "label", "method": "linear", "n_components": "1", "evaluate": "false"},
    )
    assert r.status_code == 201, r.text
    job_id = r.json()["id"]
    assert execute_job(job_id).status == "succeeded"
    body = api_client.get(f"/v1/jobs/{job_id}/report").json()["body"]
    assert body["metrics"]["d"] == 1 and body["metrics"]["p"] == 3
    beta = np.abs(np.array(body["data"]["directions"])[:, 0])
    assert beta[2] < min(beta[0], beta[1])  # w carries no information
    assert any(a["name"] == "sufficient_plot.png" and a["id"] for a in body["artifacts"])


def test_bad_tables_and_fields_are_422_without_a_job(api_client):
    files = {"table": ("t.csv", _csv(), "text/csv")}
    r = api_client.post("/v1/sdr/fit", files=files, data={"response": "nope"})
    assert r.status_code == 422 and "no column 'nope'" in r.text
    r = api_client.post("/v1/sdr/fit", files=files, data={"response": "label", "method": "pca"})
    assert r.status_code == 422
    r = api_client.post("/v1/sdr/fit", files=files, data={})
    assert r.status_code == 422 and "response" in r.text
    r = api_client.post(
        "/v1/sdr/fit", files={"table": ("t.csv", b"a,b\n\x00\x01,2\n", "text/csv")}, data={"response": "b"}
    )
    assert r.status_code == 422
    r = api_client.post("/v1/sdr/fit", data={"response": "label"})
    assert r.status_code == 422


def test_needs_an_api_key(api_client):
    r = api_client.post(
        "/v1/sdr/fit",
        files={"table": ("t.csv", _csv(), "text/csv")},
        data={"response": "label"},
        headers={"Authorization": ""},
    )
    assert r.status_code == 401
