"""Agent Protocol records and runs-as-jobs, with the application database on SQLite and on PostgreSQL.

Threads, runs and event logs live in a LangGraph store under their owner's namespace; graph state in the
owner's namespace of the graph's checkpointer; a run executes as a ``langgraph.run`` job. Here the job is
run by :func:`core.jobs.lifecycle.execute_job` in this process, as a worker would.
"""

from __future__ import annotations

import sys
import uuid

import pytest

from core.jobs.lifecycle import execute_job

STEPS_GRAPH = """
from typing import Annotated, TypedDict
import operator

from core.jobs import TransientError
from langgraph.graph import END, START, StateGraph

CALLS = {"first": 0, "second": 0}
FAIL_SECOND = {"times": 0}


class State(TypedDict, total=False):
    steps: Annotated[list[str], operator.add]


def first(state):
    CALLS["first"] += 1
    return {"steps": ["first"]}


def second(state):
    CALLS["second"] += 1
    if FAIL_SECOND["times"] > 0:
        FAIL_SECOND["times"] -= 1
        raise TransientError("the worker went away")
    return {"steps": ["second"]}


g = StateGraph(State)
g.add_node("first", first)
g.add_node("second", second)
g.add_edge(START, "first")
g.add_edge("first", "second")
g.add_edge("second", END)
graph = g.compile()
"""


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, settings, monkeypatch):
    from core.db.session import get_engine

    if request.param == "postgres":
        monkeypatch.setattr(settings, "database_url", request.getfixturevalue("postgres_url"))
        from core.db import migrate

        migrate.upgrade(settings.database_url)
        get_engine.cache_clear()  # get_engine() is cached per URL argument: None named SQLite until now
    yield request.param
    get_engine.cache_clear()


@pytest.fixture
def steps_graph(tmp_path, monkeypatch):
    """A two-node graph served as ``steps`` (its module records how often each node ran)."""
    from services.api import graphs

    name = f"steps_graph_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(STEPS_GRAPH)
    monkeypatch.syspath_prepend(str(tmp_path))
    specs = {**graphs.graph_specs(), "steps": graphs.GraphSpec("steps", name, "graph")}
    monkeypatch.setattr(graphs, "graph_specs", lambda: specs)
    graphs.load(specs["steps"])
    return sys.modules[name]


def _start(owner: str, *, thread_id: str | None = None, graph: str = "steps", payload=None, modes=("updates",)):
    """Record a thread (or reuse ``thread_id``), claim it, record a run and record its job (not sent)."""
    from services.api import agent_exec, agent_runs, graphs

    thread = agent_runs.get_thread(owner, thread_id) if thread_id else None
    thread = thread or agent_runs.new_thread(owner=owner, metadata={"t": "x"}, thread_id=thread_id)
    assert agent_exec.claim_thread(thread, graph) is None
    req = agent_exec.RunRequest(spec=graphs.resolve(graph), input=payload, stream_mode=list(modes))
    run = agent_runs.put_run(
        thread,
        {
            "run_id": str(uuid.uuid4()),
            "thread_id": thread["thread_id"],
            "graph_id": graph,
            "status": "pending",
            "request": req.record(),
            "created_at": agent_runs.now(),
        },
    )
    sent: list[str] = []
    run = agent_exec.submit_run(thread, run, send=lambda job: sent.append(job.id))
    assert sent == [run["job_id"]]
    return thread, run


def _events(thread, run_id):
    from services.api import agent_exec

    return agent_exec._read_events(thread, run_id, 0)


def test_a_run_is_a_job_of_its_key_and_its_records_are_the_keys(backend, steps_graph):
    from core.db import crud
    from core.db.session import session_scope
    from services.api import agent_exec, agent_runs

    thread, run = _start("k1", thread_id="shared.name:1", payload={"steps": []})
    with session_scope() as s:
        job = crud.get_job(s, job_id=run["job_id"])
        assert (job.owner, job.method, job.status) == ("k1", agent_exec.METHOD, "queued")
    assert "busy" in agent_exec.claim_thread(thread, "steps")  # one run at a time
    assert execute_job(run["job_id"]).status == "succeeded"

    done = agent_exec.current(thread, run["run_id"])
    assert done["status"] == "success" and done["attempts"] == 1
    assert [e[1] for e in _events(thread, run["run_id"])] == ["updates", "updates"]
    record = agent_runs.get_thread("k1", "shared.name:1")
    assert record["status"] == "idle" and agent_runs.thread_state(record)["values"]["steps"] == ["first", "second"]

    # another key: the same thread id is another thread (its own, empty); nothing of k1's is listed
    assert agent_runs.get_thread("k2", "shared.name:1") is None
    other = agent_runs.new_thread(owner="k2", metadata=None, thread_id="shared.name:1")
    assert agent_runs.thread_state(other)["values"] == {} and agent_runs.list_runs(other, limit=5, offset=0) == []
    assert [
        t["thread_id"] for t in agent_runs.search_threads(owner="k1", metadata=None, status=None, limit=9, offset=0)
    ]
    agent_runs.delete_thread(other)
    assert agent_runs.thread_state(agent_runs.get_thread("k1", "shared.name:1"))["values"]["steps"]

    agent_runs.delete_thread(record)
    assert agent_runs.get_thread("k1", "shared.name:1") is None and _events(thread, run["run_id"]) == []


def test_an_interrupted_attempt_resumes_from_its_last_checkpoint(backend, steps_graph):
    """A worker that dies mid-run (here: the node's TransientError, which leaves the job to be taken over, as the
    reaper does after a SIGKILL): the next attempt continues after the last finished node and ends the run."""
    from services.api import agent_exec

    steps_graph.FAIL_SECOND["times"] = 1
    thread, run = _start("k1", payload={"steps": []})
    first = execute_job(run["job_id"])
    assert first.retry and agent_exec.current(thread, run["run_id"])["status"] == "running"
    assert execute_job(run["job_id"]).status == "succeeded"  # the stale job is claimed again
    done = agent_exec.current(thread, run["run_id"])
    assert done["status"] == "success" and done["attempts"] == 2
    assert steps_graph.CALLS == {"first": 1, "second": 2}  # "first" did not run again
    updates = [next(iter(e[2])) for e in _events(thread, run["run_id"]) if e[1] == "updates"]
    assert updates == ["first", "second"]  # the log holds both attempts' chunks, once each


def test_a_job_cannot_run_another_keys_run(steps_graph):
    from core.jobs.lifecycle import submit_job
    from services.api import agent_exec

    thread, run = _start("alice", payload={"steps": []})
    params = {"thread_id": thread["thread_id"], "run_id": run["run_id"]}
    stranger, _ = submit_job(agent_exec.METHOD, params, owner="bob")  # POST /v1/jobs by another key
    out = execute_job(stranger.id)
    assert out.status == "failed" and "no run" in out.error
    copycat, _ = submit_job(agent_exec.METHOD, params, owner="alice")  # the key's own, but not the run's job
    out = execute_job(copycat.id)
    assert out.status == "failed" and "another job" in out.error
    assert agent_exec.current(thread, run["run_id"])["status"] == "pending"
    assert execute_job(run["job_id"]).status == "succeeded"


def test_a_run_whose_job_ended_unrecorded_releases_its_thread(steps_graph):
    """A run cancelled while its job was queued never ran: reading it closes it and frees the thread."""
    from services.api import agent_exec, agent_runs

    thread, run = _start("k1", payload={"steps": []})
    assert agent_exec.request_cancel(thread, run["run_id"])
    assert agent_exec.current(thread, run["run_id"])["status"] == "interrupted"
    assert agent_runs.get_thread("k1", thread["thread_id"])["status"] == "idle"
    assert agent_exec.claim_thread(thread, "steps") is None
    assert not agent_exec.request_cancel(thread, run["run_id"])  # already ended


def test_a_failing_graph_fails_its_job_and_records_the_error(steps_graph):
    from services.api import agent_exec, agent_runs

    thread, run = _start("k1", payload={"steps": 3})  # not a list: the reducer fails
    out = execute_job(run["job_id"])
    assert out.status == "failed"
    done = agent_exec.current(thread, run["run_id"])
    assert done["status"] == "error" and done["error"]["error"]
    assert [e[1] for e in _events(thread, run["run_id"])][-1] == "error"
    assert agent_runs.get_thread("k1", thread["thread_id"])["status"] == "error"
