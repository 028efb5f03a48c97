"""The MultiCogEval simulator and the EcoLevels flow served by the Agent Protocol routes (``langgraph.json``):
a client sets only ``context.config``, validated; scripted models stand in for the LLM."""

from __future__ import annotations

import time

import pytest

from methods.medcog.cases import make_case

pytestmark = pytest.mark.usefixtures("inline_worker")  # runs are jobs: a worker in this process runs them
BASE = "/v1/langgraph"


def _assistants(api_client) -> dict[str, dict]:
    return {a["graph_id"]: a for a in api_client.post(f"{BASE}/assistants/search", json={}).json()}


def test_both_graphs_are_assistants_with_their_config_schemas(api_client):
    found = _assistants(api_client)
    assert {"medcog", "ecolevels"} <= set(found)
    med = api_client.get(f"{BASE}/assistants/{found['medcog']['assistant_id']}/schemas").json()
    assert {"disease", "case_index", "model", "max_turns"} <= set(
        med["context_schema"]["properties"]["config"]["properties"]
    )
    eco = api_client.get(f"{BASE}/assistants/ecolevels/schemas").json()
    assert {"target", "probes", "n_units"} <= set(eco["context_schema"]["properties"]["config"]["properties"])
    nodes = {n["id"] for n in api_client.get(f"{BASE}/assistants/medcog/graph").json()["nodes"]}
    assert {"intake", "agent", "environment", "summarise"} <= nodes


def test_a_diagnosis_episode_through_the_agent_protocol(api_client, data_dir, scripted_llm):
    case = make_case("Pancreatitis", 1)
    replies = iter(["Rationale: pain.\nAction: LAB", "Rationale: enzymes.\nLab Tests: lipase", "Action: OUTPUT"])
    name = f"medcogap{time.monotonic_ns()}"
    provider = scripted_llm(name, lambda m: next(replies, "Diagnosis: acute pancreatitis\nTreatment: fluids"))
    body = {
        "assistant_id": "medcog",
        "input": {},
        "context": {"config": {"model": f"scripted/{name}", "disease": "Pancreatitis", "case_index": 1}},
    }
    r = api_client.post(f"{BASE}/runs/wait", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["done"] and out["diagnosis"].lower().startswith("acute pancreatitis")
    assert out["requested_labs"] and out["actions_taken"][:1] == ["LAB"]
    first_prompt = provider.calls[name][0][-1]["content"]
    assert case.history in first_prompt  # the case the config named, built on the server


@pytest.mark.parametrize(
    "config",
    [{"disease": "Flu"}, {"case_index": 99}, {"max_turns": 500}, {"model": "x" * 300}, {"budget": 10}],
)
def test_bad_configs_are_422(api_client, config):
    r = api_client.post(
        f"{BASE}/runs/wait", json={"assistant_id": "medcog", "input": {}, "context": {"config": config}}
    )
    assert r.status_code == 422, r.text


def test_the_ecolevels_flow_through_the_agent_protocol(api_client, data_dir):
    from methods.ecolevels.baselines import probe_baselines

    with probe_baselines() as m:
        config = {
            "model": m["stereotyped (reference)"],
            "probes": ["winobias", "resume_screening"],
            "paraphrases": 1,
            "seeds": [0],
            "n_units": 2,
        }
        r = api_client.post(
            f"{BASE}/runs/wait", json={"assistant_id": "ecolevels", "input": {}, "context": {"config": config}}
        )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["model"] == m["stereotyped (reference)"] and out["settings"]["n_units"] == 2
    results = out["report"]["data"]["results"]
    assert [x["probe_id"] for x in results] == ["winobias", "resume_screening"]
    assert [x["effect"] for x in results] == pytest.approx([1.0, 1.0])
    too_big = {**config, "n_units": 10_000}
    r = api_client.post(
        f"{BASE}/runs/wait", json={"assistant_id": "ecolevels", "input": {}, "context": {"config": too_big}}
    )
    assert r.status_code == 422
