"""LangGraph's own SDK client against our Agent Protocol routes (``/v1/langgraph``), DEFAME with a scripted model.

The API runs under uvicorn in a thread (the SDK speaks real HTTP); the scripted model lives in this
process, so the graph's LLM calls reach it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.usefixtures("inline_worker")  # runs are jobs: a worker in this process runs them
REPO = Path(__file__).resolve().parents[3]
CLAIM = {"text": "The Golden Gate Bridge opened in 1952.", "images": {}, "date": "2021-03-01"}


def reply(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    if "# Your Actions" in text:  # no search: the planner proposes nothing, the judge decides at once
        return "The date is well known; no search is needed."
    if "# Justification" in text:
        return "The Golden Gate Bridge opened in 1937, not 1952."
    if "# Your judgement" in text:
        return "It opened in 1937, so the claim is `refuted`."
    raise AssertionError(f"unexpected prompt: {text[:200]}")


@pytest.fixture(scope="module")
def live_api():
    """The whole API (``create_app``) on a free port; yields its base URL."""
    import uvicorn

    from services.api.main import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def model(scripted_llm):
    name = f"ap{time.monotonic_ns()}"
    scripted_llm(name, reply)
    return f"scripted/{name}"


@pytest.fixture
def client(live_api, api_key):
    from langgraph_sdk import get_sync_client

    return get_sync_client(
        url=f"{live_api}/v1/langgraph", api_key=None, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
    )


def _context(model: str) -> dict:
    return {"config": {"model": model, "max_iterations": 1, "retries": 1}}


def test_assistants_are_the_graphs_of_langgraph_json(client):
    graphs = json.loads((REPO / "langgraph.json").read_text())["graphs"]
    found = {a["graph_id"]: a for a in client.assistants.search()}
    assert set(found) == set(graphs) and {"defame", "pae"} <= set(found)
    assert client.assistants.get("defame")["assistant_id"] == found["defame"]["assistant_id"]
    schemas = client.assistants.get_schemas(found["defame"]["assistant_id"])
    assert "max_iterations" in schemas["context_schema"]["properties"]["config"]["properties"]
    nodes = {n["id"] for n in client.assistants.get_graph("defame")["nodes"]}
    assert {"plan", "judge", "justify"} <= nodes


def test_sdk_streams_a_defame_run(client, model):
    thread = client.threads.create(metadata={"purpose": "test"})
    parts = list(
        client.runs.stream(
            thread["thread_id"], "defame", input={"claim": CLAIM}, context=_context(model), stream_mode="updates"
        )
    )
    assert parts[0].event == "metadata" and "run_id" in parts[0].data
    updates = [p.data for p in parts if p.event == "updates"]
    assert [next(iter(u)) for u in updates] == ["plan", "judge", "justify"]
    assert updates[1]["judge"]["label"] == "refuted"
    assert "1937" in updates[2]["justify"]["justification"]
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["label"] == "refuted" and state["next"] == []
    t = client.threads.get(thread["thread_id"])
    assert t["status"] == "idle" and t["metadata"]["graph_id"] == "defame" and t["values"]["label"] == "refuted"
    (run,) = client.runs.list(thread["thread_id"])
    assert run["status"] == "success" and run["run_id"] == parts[0].data["run_id"]
    assert thread["thread_id"] in {x["thread_id"] for x in client.threads.search(metadata={"purpose": "test"})}


def test_interrupt_before_a_node_then_resume(client, model):
    tid = client.threads.create()["thread_id"]
    first = list(
        client.runs.stream(
            tid,
            "defame",
            input={"claim": CLAIM},
            context=_context(model),
            stream_mode=["values", "updates"],
            interrupt_before=["judge"],
        )
    )
    assert [next(iter(p.data)) for p in first if p.event == "updates"] == ["plan", "__interrupt__"]
    state = client.threads.get_state(tid)
    assert state["next"] == ["judge"] and "label" not in state["values"]
    assert client.threads.get(tid)["status"] == "interrupted"
    resumed = list(client.runs.stream(tid, "defame", input=None, context=_context(model), stream_mode="updates"))
    assert [next(iter(p.data)) for p in resumed if p.event == "updates"] == ["judge", "justify"]
    assert client.threads.get_state(tid)["values"]["label"] == "refuted"
    assert len(client.threads.get_history(tid, limit=50)) >= 4


def test_background_run_cancel_and_resume(client, scripted_llm):
    """A background run cancelled mid-node stops after that node; a new run with no input finishes it."""
    entered, gate = threading.Event(), threading.Event()

    def slow(messages):
        if "# Your Actions" in str(messages[-1]["content"]):
            entered.set()
            gate.wait(30)
        return reply(messages)

    name = f"apslow{time.monotonic_ns()}"
    scripted_llm(name, slow)
    tid = client.threads.create()["thread_id"]
    run = client.runs.create(tid, "defame", input={"claim": CLAIM}, context=_context(f"scripted/{name}"))
    assert entered.wait(30)
    with pytest.raises(Exception, match="busy with another run"):  # one run at a time on a thread (409)
        client.runs.create(tid, "defame", input={"claim": CLAIM}, context=_context(f"scripted/{name}"))
    client.runs.cancel(tid, run["run_id"])
    gate.set()
    client.runs.join(tid, run["run_id"])
    assert client.runs.get(tid, run["run_id"])["status"] == "interrupted"
    assert client.threads.get_state(tid)["next"] == ["judge"]
    values = client.runs.wait(tid, "defame", input=None, context=_context(f"scripted/{name}"))
    assert values["label"] == "refuted"


def test_a_background_run_is_joined_by_its_stream(client, model):
    """``runs.join_stream`` replays what a run recorded and follows it to its end (``Last-Event-ID`` resumes)."""
    tid = client.threads.create()["thread_id"]
    run = client.runs.create(tid, "defame", input={"claim": CLAIM}, context=_context(model), stream_mode="updates")
    parts = list(client.runs.join_stream(tid, run["run_id"]))
    assert parts[0].event == "metadata"
    assert [next(iter(p.data)) for p in parts if p.event == "updates"] == ["plan", "judge", "justify"]
    assert client.runs.get(tid, run["run_id"])["status"] == "success"
    again = list(client.runs.join_stream(tid, run["run_id"], last_event_id="1"))  # after the first two
    assert [next(iter(p.data)) for p in again if p.event == "updates"] == ["justify"]


def test_keys_owners_and_validation(live_api, client, api_key, model):
    from core.db import crud
    from core.db.session import session_scope

    base = f"{live_api}/v1/langgraph"
    assert httpx.post(f"{base}/threads", json={}).status_code == 401
    tid = client.threads.create()["thread_id"]
    with session_scope() as s:
        _, other = crud.create_api_key(s, name="other")
    assert httpx.get(f"{base}/threads/{tid}", headers={"Authorization": f"Bearer {other}"}).status_code == 404
    auth = {"Authorization": f"Bearer {api_key}"}
    bad = [
        ({"assistant_id": "nope", "input": {}}, 404, "no assistant"),
        ({"assistant_id": "defame", "input": {"claim": CLAIM}, "stream_mode": "messages"}, 422, "stream_mode"),
        ({"assistant_id": "defame", "input": {"claim": CLAIM}, "context": {"store": 1}}, 422, "context"),
        ({"assistant_id": "defame", "input": {}, "context": {"config": {"max_iterations": 99}}}, 422, "max_iterations"),
        ({"assistant_id": "defame", "input": {}, "interrupt_before": ["nowhere"]}, 422, "unknown nodes"),
        ({"assistant_id": "pae", "input": {"run_id": "x"}, "context": {"config": {}}}, 422, "takes no context"),
    ]
    for body, code, needle in bad:
        r = httpx.post(f"{base}/threads/{tid}/runs/wait", json=body, headers=auth)
        assert r.status_code == code and needle in r.text, (body, r.status_code, r.text)
    r = httpx.post(
        f"{base}/runs/wait",
        json={"assistant_id": "defame", "input": {"claim": CLAIM}, "context": _context(model)},
        headers=auth,
    )
    assert r.status_code == 200 and r.json().get("label") == "refuted", r.text
    run_thread = r.headers["content-location"].split("/threads/")[1].split("/")[0]
    assert httpx.get(f"{base}/threads/{run_thread}", headers=auth).status_code == 404  # stateless: deleted


APPROVAL_GRAPH = """
from typing import TypedDict

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict, total=False):
    draft: str
    verdict: str


def draft(state):
    get_stream_writer()({"drafted": len(state["draft"])})
    return {"draft": state["draft"].upper()}


def review(state):
    answer = interrupt({"question": "approve?", "draft": state["draft"]})
    return {"verdict": "approved" if answer == "yes" else "rejected"}


g = StateGraph(State)
g.add_node("draft", draft)
g.add_node("review", review)
g.add_edge(START, "draft")
g.add_edge("draft", "review")
g.add_edge("review", END)
graph = g.compile()
"""


def test_dynamic_interrupt_resumed_with_a_command(client, tmp_path, monkeypatch):
    """A graph that calls ``interrupt()``: the stream shows the question, ``command.resume`` answers it.

    The graph is served by adding one entry to the graph list (as Clinical GoT will be to langgraph.json).
    """
    from services.api import graphs

    (tmp_path / "approval_graph.py").write_text(APPROVAL_GRAPH)
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = {**graphs.graph_specs(), "approval": graphs.GraphSpec("approval", "approval_graph", "graph")}
    monkeypatch.setattr(graphs, "graph_specs", lambda: specs)

    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "approval", input={"draft": "ship it"}, stream_mode=["updates", "custom"]))
    assert {"drafted": 7} in [p.data for p in parts if p.event == "custom"]
    (question,) = [p.data["__interrupt__"] for p in parts if p.event == "updates" and "__interrupt__" in p.data]
    assert question[0]["value"] == {"question": "approve?", "draft": "SHIP IT"}
    thread = client.threads.get(tid)
    assert (
        thread["status"] == "interrupted" and list(thread["interrupts"].values())[0][0]["value"]["draft"] == "SHIP IT"
    )
    values = client.runs.wait(tid, "approval", command={"resume": "yes"})
    assert values == {"draft": "SHIP IT", "verdict": "approved"}
    assert client.threads.get(tid)["status"] == "idle"


def test_a_client_that_disconnects_cancels_its_run(live_api, client, api_key, scripted_llm):
    entered, gate = threading.Event(), threading.Event()

    def slow(messages):
        if "# Your Actions" in str(messages[-1]["content"]):
            entered.set()
            gate.wait(30)
        return reply(messages)

    name = f"apgone{time.monotonic_ns()}"
    scripted_llm(name, slow)
    tid = client.threads.create()["thread_id"]
    body = {"assistant_id": "defame", "input": {"claim": CLAIM}, "context": _context(f"scripted/{name}")}
    url = f"{live_api}/v1/langgraph/threads/{tid}/runs/stream"
    with httpx.stream("POST", url, json=body, headers={"Authorization": f"Bearer {api_key}"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        lines = r.iter_lines()  # kept: a dropped iterator closes the connection
        assert next(lines) == "event: metadata"
        assert entered.wait(30)
        assert client.threads.get(tid)["status"] == "busy"
    run_id = r.headers["content-location"].rsplit("/", 1)[1]
    time.sleep(0.5)  # the server notices the closed connection
    gate.set()
    client.runs.join(tid, run_id)
    assert client.runs.get(tid, run_id)["status"] == "interrupted"
    assert client.threads.get(tid)["status"] == "interrupted"


def test_pae_is_served_and_a_failing_run_reports_its_error(client):
    """PAE's graph runs a stored PAE run (``run_id``); an unknown one fails in its first node, as an ``error`` event."""
    tid = client.threads.create()["thread_id"]
    parts = list(client.runs.stream(tid, "pae", input={"run_id": "no-such-run"}, stream_mode="updates"))
    (error,) = [p.data for p in parts if p.event == "error"]
    assert error["error"] and "no-such-run" in error["message"]
    assert client.threads.get(tid)["status"] == "error"
    assert client.runs.list(tid)[0]["status"] == "error"
