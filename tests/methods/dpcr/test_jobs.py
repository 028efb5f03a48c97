"""``continual.run`` with DPCR end to end: API → worker task (Celery) → database → report → artifacts.

The Celery app runs in eager mode, so the real ``paperworks.run_job`` task body executes in this
process exactly as a worker would run it (lifecycle, progress, report and artifact persistence);
the multi-process broker path itself is covered by ``tests/integration/test_worker_e2e.py``.
"""

import pytest

TINY = {
    "channels": [4, 8, 8],
    "epochs_first": 2,
    "milestones_first": [1],
    "epochs_inc": 1,
    "milestones_inc": [1],
    "tssp_passes": 2,
}


@pytest.fixture
def eager_worker():
    from services.worker.celery_app import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield app
    app.conf.task_always_eager = before


def test_two_task_dpcr_run_through_the_worker(api_client, eager_worker):
    body = {
        "method": "continual.run",
        "params": {"method": "dpcr", "n_tasks": 2, "seeds": 1, "samples_per_class": 40, "options": TINY},
    }
    r = api_client.post("/v1/jobs", json=body)
    assert r.status_code == 201, r.text
    job = api_client.get(f"/v1/jobs/{r.json()['id']}").json()
    assert job["status"] == "succeeded", job
    assert job["progress"] == pytest.approx(1.0)
    rep = api_client.get(f"/v1/jobs/{job['id']}/report").json()
    body = rep["body"]
    exp = body["data"]["experiment"]
    assert exp["heads"] == ["lwf", "ridge_uncal", "tssp", "dpcr", "dpcr_literal", "oracle"]
    run = exp["runs"][0]
    assert run["seed"] == 1993 and len(run["matrices"]["dpcr"]) == 2 and len(run["diagnostics"]) == 2
    assert 0.0 <= body["metrics"]["A_f"] <= 1.0 and body["metrics"]["best_head"] in exp["heads"]
    # headed by the method's own arm, not the best one (the oracle is an upper bound)
    assert body["metrics"]["method"] == "dpcr" and body["title"].startswith("dpcr")
    assert body["metrics"]["A_f"] == pytest.approx(exp["aggregate"]["dpcr"]["A_f"][0], abs=1e-6)
    assert not [k for k in body["metrics"] if k.startswith("run.")]  # no tile per arm and metric
    assert "accuracy matrices" in rep["markdown"]
    arts = {a["name"]: a for a in body["artifacts"]}
    assert arts["run_matrix.png"]["id"]
    png = api_client.get(f"/v1/artifacts/{arts['run_matrix.png']['id']}")
    assert png.status_code == 200 and png.content[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "params,needle",
    [
        ({"method": "no-such"}, "unknown continual method"),
        ({"options": {"epochs_first": -1}}, "epochs_first"),
        ({"options": {"gamma_sweep": [1.0], "arms": ["lwf"]}}, "gamma_sweep"),
        ({"samples_per_class": 1}, "samples_per_class"),
        ({"dataset": "cifar"}, "unknown dataset"),
        ({"options": {"bogus": 1}}, "bogus"),
    ],
)
def test_bad_params_are_422(api_client, params, needle):
    r = api_client.post("/v1/jobs", json={"method": "continual.run", "params": params})
    assert r.status_code == 422, r.text
    assert needle in str(r.json()["detail"])


def test_methods_endpoint_describes_continual_run(api_client):
    spec = api_client.get("/v1/methods/continual.run").json()
    assert "seeds" in str(spec) and "samples_per_class" in str(spec)


def test_continual_catalogue_lists_dpcr_with_presets(api_client):
    methods = {m["name"]: m for m in api_client.get("/v1/continual/methods").json()}
    dpcr = methods["dpcr"]
    assert dpcr["heads"][:4] == ["lwf", "ridge_uncal", "tssp", "dpcr"]
    assert {"quick", "spec", "reproduce"} <= set(dpcr["presets"])
    assert "gamma_p" in dpcr["options_schema"]["properties"]
    assert "digits" in api_client.get("/v1/continual/datasets").json()
    assert api_client.get("/v1/continual/methods", headers={"Authorization": "Bearer nope"}).status_code == 401
