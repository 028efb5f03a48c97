"""Clinical GoT served by the Agent Protocol routes (``/v1/langgraph``, from ``langgraph.json``), scripted model."""

from __future__ import annotations

import json
import time

import pytest

pytestmark = pytest.mark.usefixtures("inline_worker")  # runs are jobs: a worker in this process runs them
BASE = "/v1/langgraph"


def reply(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    if "Question: what is the lesion grade" in text:
        return "[ans]: level3, 0.0800"
    if "Question: which of the 62 regions" in text:
        return "[ans]: 23, 30, 59"
    if "Question: what is the MRI injury score" in text:
        return "[ans]: Score 3."
    if "Question: will the 2-year" in text:
        return "[ans]: 1"
    raise AssertionError(text[-200:])


@pytest.fixture
def model(scripted_llm):
    name = f"cgotap{time.monotonic_ns()}"
    scripted_llm(name, reply)
    return f"scripted/{name}"


def _events(body: str) -> list[tuple[str, object]]:
    out = []
    for block in body.strip().split("\n\n"):
        ev = next((ln[6:].strip() for ln in block.splitlines() if ln.startswith("event:")), None)
        data = "\n".join(ln[5:].strip() for ln in block.splitlines() if ln.startswith("data:"))
        if ev:
            out.append((ev, json.loads(data) if data else None))
    return out


def test_clinical_got_is_an_assistant_with_its_config_schema(api_client):
    found = {a["graph_id"]: a for a in api_client.post(f"{BASE}/assistants/search", json={}).json()}
    assert "clinical_got" in found
    aid = found["clinical_got"]["assistant_id"]
    schemas = api_client.get(f"{BASE}/assistants/{aid}/schemas").json()
    props = schemas["context_schema"]["properties"]["config"]["properties"]
    assert {"model", "oracle_nodes", "visual", "bench"} <= set(props)
    nodes = {n["id"] for n in api_client.get(f"{BASE}/assistants/clinical_got/graph").json()["nodes"]}
    assert {"n1", "n2", "n2_5", "n3", "n4", "n5"} <= nodes


def test_a_scripted_run_streams_every_node(api_client, model):
    tid = api_client.post(f"{BASE}/threads", json={}).json()["thread_id"]
    body = {
        "assistant_id": "clinical_got",
        "input": {"case_id": "case002"},
        "context": {"config": {"model": model, "bench": {"n_cases": 5}}},
        "stream_mode": "updates",
    }
    r = api_client.post(f"{BASE}/threads/{tid}/runs/stream", json=body)
    assert r.status_code == 200, r.text
    events = _events(r.text)
    assert events[0][0] == "metadata"
    updates = [d for e, d in events if e == "updates"]
    order = [next(iter(u)) for u in updates]
    assert set(order) == {"n1", "n2", "n2_5", "n3", "n4", "n5"}
    assert order.index("n3") > max(order.index("n1"), order.index("n2")) and order.index("n4") > order.index("n3")
    n4 = next(u["n4"]["n4"] for u in updates if "n4" in u)  # {node: {state key: record}}
    assert n4.get("parsed") == 1 and "was: [ans]: Score 3." in n4["prompt"]
    state = api_client.get(f"{BASE}/threads/{tid}/state").json()
    assert state["next"] == [] and state["values"]["n5"]["answer"].endswith("Score 3.")
    bad = api_client.post(
        f"{BASE}/threads/{tid}/runs/stream",
        json={**body, "context": {"config": {"oracle_nodes": ["n9"]}}},
    )
    assert bad.status_code == 422
