"""Thread and run records and graph state with the application database on PostgreSQL (LangGraph's
``PostgresStore`` and ``PostgresSaver``), and on the default SQLite: the same calls, the same answers."""

from __future__ import annotations

import pytest

CLAIM = {"text": "The Golden Gate Bridge opened in 1952.", "images": {}}


def reply(messages: list[dict]) -> str:
    text = str(messages[-1]["content"])
    if "# Your Actions" in text:
        return "No search is needed."
    if "# Justification" in text:
        return "It opened in 1937."
    return "So the claim is `refuted`."


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, settings, monkeypatch):
    if request.param == "postgres":
        monkeypatch.setattr(settings, "database_url", request.getfixturevalue("postgres_url"))
    return request.param


def test_a_run_is_recorded_and_its_state_kept(backend, settings, scripted_llm):
    from services.api import agent_runs as runs
    from services.api import graphs

    scripted_llm("runs", reply)
    spec = graphs.resolve("defame")
    thread = runs.new_thread(owner="k1", metadata={"backend": backend})
    assert runs.claim_thread(thread["thread_id"], "defame") is None
    run = runs.put_run(
        {
            "run_id": "r1",
            "thread_id": thread["thread_id"],
            "status": "pending",
            "process": runs.process_name(),
            "created_at": runs.now(),
        }
    )
    assert "busy" in runs.claim_thread(thread["thread_id"], "defame")
    req = runs.RunRequest(
        spec=spec,
        input={"claim": CLAIM},
        context=graphs.context_for(spec, {"config": {"model": "scripted/runs", "max_iterations": 1, "retries": 1}}),
        stream_mode=["updates"],
    )
    chunks: list[tuple[str, dict]] = []
    out = runs.execute(run, req, runs.ActiveRun("r1"), lambda mode, chunk: chunks.append((mode, chunk)))
    assert out["run"]["status"] == "success" and out["values"]["label"] == "refuted"
    assert [next(iter(c)) for _, c in chunks] == ["plan", "judge", "justify"]
    record = runs.get_thread(thread["thread_id"])
    assert record["status"] == "idle" and record["graph_id"] == "defame"
    assert runs.thread_state(record)["values"]["label"] == "refuted"
    assert [
        t["thread_id"]
        for t in runs.search_threads(owner="k1", metadata={"backend": backend}, status=None, limit=5, offset=0)
    ] == [thread["thread_id"]]
    assert runs.search_threads(owner="k2", metadata=None, status=None, limit=5, offset=0) == []
    runs.delete_thread(thread["thread_id"])
    assert runs.get_thread(thread["thread_id"]) is None and runs.list_runs(thread["thread_id"], limit=5, offset=0) == []


def test_a_thread_left_busy_by_a_dead_process_is_taken_over():
    import subprocess
    import sys

    from services.api import agent_runs as runs

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = runs.process_name().rsplit(":", 1)[0]
    thread = runs.new_thread(owner="k1", metadata=None)
    assert runs.claim_thread(thread["thread_id"], "defame") is None
    runs.put_run(
        {
            "run_id": "lost",
            "thread_id": thread["thread_id"],
            "status": "running",
            "process": f"{host}:{dead.stdout.strip()}",
            "created_at": runs.now(),
        }
    )
    assert runs.claim_thread(thread["thread_id"], "defame") is None  # the dead process's run no longer holds it
    assert runs.get_run(thread["thread_id"], "lost")["status"] == "error"
    runs.put_run(
        {
            "run_id": "live",
            "thread_id": thread["thread_id"],
            "status": "running",
            "process": runs.process_name(),
            "created_at": runs.now(),
        }
    )
    assert "busy" in runs.claim_thread(thread["thread_id"], "defame")
