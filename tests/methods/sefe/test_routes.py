"""``/v1/sefe/*``: validation before queueing, the task catalogue, the ASD preview."""


def test_run_rejects_bad_params_with_422(api_client):
    r = api_client.post("/v1/sefe/run", json={"n_train": 100000})
    assert r.status_code == 422
    r = api_client.post("/v1/sefe/run", json={"tasks": ["iris", "iris"]})
    assert r.status_code == 422 and "repeat" in r.text
    r = api_client.post("/v1/sefe/run", json={"arms": ["nope"]})
    assert r.status_code == 422


def test_tasks_and_asd_preview(api_client):
    tasks = api_client.get("/v1/sefe/tasks").json()
    assert [t["name"] for t in tasks] == ["iris", "cancer", "wine", "digits"]
    assert [t["native_style"] for t in tasks] == ["SA", "YN", "MCQ", "SA"]
    assert 0 < tasks[1]["majority_accuracy"] < 1
    r = api_client.get("/v1/sefe/asd", params={"task": "wine", "n_train": 40, "x_percent": 20, "limit": 3})
    body = r.json()
    assert body["counts"] == {"MCQ": 32, "YN": 2, "SA": 2, "BE": 2, "DE": 2} or sum(body["counts"].values()) == 40
    assert body["counts"]["MCQ"] == 32 and len(body["examples"]) == 3
    assert api_client.get("/v1/sefe/asd", params={"n_train": 10**6}).status_code == 422
    assert api_client.get("/v1/sefe/asd", params={"task": "mnist"}).status_code == 422


def test_routes_need_a_key(api_client):
    api_client.headers.pop("Authorization")
    assert api_client.get("/v1/sefe/tasks").status_code == 401
