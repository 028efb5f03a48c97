"""``/v1/lms3/*``: synchronous selection with the real local model, job submission, validation."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def module_store():
    """A real in-memory Chroma shared by this module's tests (indexed once)."""
    from core.vectorstore import VectorStore, make_client

    client = make_client(ephemeral=True)
    yield VectorStore(client)
    for name in client.list_collections():
        client.delete_collection(name if isinstance(name, str) else name.name)


@pytest.fixture
def indexed(module_store, monkeypatch, data_dir):
    """An 8-item MAWPS pool indexed with SmolLM2 in an ephemeral Chroma that the API also sees."""
    import core.vectorstore as vectorstore
    import methods.lms3.selection as selection
    from methods.lms3 import Lms3Service, PoolSpec

    monkeypatch.setattr(selection, "get_vectorstore", lambda: module_store)
    monkeypatch.setattr(vectorstore, "get_vectorstore", lambda: module_store)
    Lms3Service(store=module_store).index(PoolSpec("mawps", 8, seed=3))  # a no-op after the first test
    return {"dataset": "mawps", "pool_size": 8, "seed": 3}


def test_select_returns_scores_rejection_and_prompt(api_client, indexed):
    q = "Sara has 31.0 red and 15.0 green balloons . How many balloons does she have in total ?"
    r = api_client.post("/v1/lms3/select", json={**indexed, "query": q, "k": 2, "l": 1.0})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["pool_size"] == 8 and body["lam"] == 8 and not body["rejected"]
    assert [d["index"] for d in body["demos"]] == [d["index"] for d in body["candidates"]]
    assert body["demos"][0]["score"] <= body["demos"][1]["score"]
    assert body["prompt"].startswith("Here are some examples you can refer to.\n\nQ: " + body["demos"][0]["problem"])
    assert body["prompt"].endswith("Q: " + q + "\nA: ")

    # non-reference, pool-norm-free Sim: distances between unit vectors, so every Sim lies in [0, 2]
    r = api_client.post("/v1/lms3/select", json={**indexed, "query": q, "k": 8, "l": 1.0, "normalize": "unit"})
    assert r.status_code == 200, r.text
    cands = r.json()["candidates"]
    assert len(cands) == 8 and all(0.0 <= c["sim"] <= 2.0 + 1e-5 for c in cands)
    assert [c["score"] for c in cands] == sorted(c["score"] for c in cands)
    assert max(d["sim"] for d in body["candidates"]) > 2.0  # the reference Sim is not bounded that way

    r = api_client.post("/v1/lms3/select", json={**indexed, "query": q})  # λ = int(0.08) = 0
    assert r.status_code == 200 and r.json()["rejected"] and r.json()["prompt"].startswith("Let's think")

    pools = api_client.get("/v1/lms3/pools").json()
    assert {"pool": "mawps-n8s3", "mode": "reference", "layer": "final_norm_output", "items": 8} in pools


def test_unindexed_pool_is_409_and_bad_input_422(api_client, indexed):
    r = api_client.post("/v1/lms3/select", json={"dataset": "gsm8k", "pool_size": 5, "query": "1 + 1 ?"})
    assert r.status_code == 409 and "lms3 index gsm8k" in r.json()["detail"]
    for bad in (
        {**indexed, "query": ""},
        {**indexed, "query": "x" * 9000},
        {**indexed, "query": "2+2", "k": 0},
        {"dataset": "math", "query": "2+2"},
        {**indexed, "query": "2+2", "generate": True},
        {**indexed, "query": "2+2", "arm": "oracle"},
        {**indexed, "query": "2+2", "normalize": "whiten"},
    ):
        r = api_client.post("/v1/lms3/select", json=bad)
        assert r.status_code == 422, (bad, r.text)


def test_index_submits_a_job(api_client):
    r = api_client.post("/v1/lms3/index", json={"dataset": "mawps", "pool_size": 4})
    assert r.status_code == 201, r.text
    assert r.json()["method"] == "lms3.index" and r.json()["status"] == "queued"
    assert api_client.post("/v1/lms3/index", json={"dataset": "svamp"}).status_code == 422
    assert api_client.post("/v1/lms3/select", json={"query": "x"}, headers={"Authorization": ""}).status_code == 401
