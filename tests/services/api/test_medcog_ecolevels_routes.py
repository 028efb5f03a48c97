"""The MultiCogEval and EcoLevels routes: pickers, synchronous classification, job submission, validation."""


def test_medcog_routes(api_client, data_dir):
    tasks = api_client.get("/v1/medcog/tasks").json()
    assert tasks["medqa"]["MCQ"] == {"chance": 0.2, "items": 795} and tasks["medmcqa"]["SV"]["chance"] == 0.5
    assert any(d["disease"] == "Sepsis" and d["micro"] == 2 for d in api_client.get("/v1/medcog/diseases").json())
    r = api_client.post("/v1/medcog/lowmid", json={"model": "scripted/x", "n_items": 1, "repeats": 2, "tasks": ["MCQ"]})
    assert r.status_code in (201, 422), r.text  # 422 when the server's model allow-list refuses scripted/x
    assert api_client.post("/v1/medcog/lowmid", json={"repeats": 1}).status_code == 422
    assert api_client.post("/v1/medcog/high", json={"diseases": ["Flu"]}).status_code == 422
    r = api_client.post("/v1/medcog/high", json={"diseases": ["Sepsis"], "max_turns": 4})
    assert r.status_code == 201 and r.json()["method"] == "medcog.high"


def test_ecolevels_routes(api_client, data_dir):
    probes = {p["id"]: p for p in api_client.get("/v1/ecolevels/probes").json()}
    assert probes["winobias"]["level"] == "L2" and probes["resume_screening"]["construct"]["dimension"]
    assert set(api_client.get("/v1/ecolevels/targets").json()) == {"resume_screener", "letter_assistant"}
    meta = probes["resume_screening"]["metadata"]
    out = api_client.post("/v1/ecolevels/classify", json={"metadata": meta}).json()
    assert out["level"] == "L4" and out["ev_band"] == "high"
    bad = dict(meta, observes="telepathy")
    assert api_client.post("/v1/ecolevels/classify", json={"metadata": bad}).status_code == 422
    r = api_client.post("/v1/ecolevels/runs", json={"probes": ["winobias"], "n_units": 2})
    assert r.status_code == 201 and r.json()["method"] == "ecolevels.run"
    assert api_client.post("/v1/ecolevels/runs", json={"n_units": 10_000}).status_code == 422


def test_routes_need_a_key(api_client):
    api_client.headers.pop("Authorization")
    assert api_client.get("/v1/ecolevels/probes").status_code == 401
    assert api_client.post("/v1/medcog/high", json={}).status_code == 401
