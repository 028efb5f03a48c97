"""The foundation LangGraph checkpointer: one SQLite file per agent, PostgreSQL when the app DB is."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from core.checkpoint import checkpointer, sqlite_path


class _State(TypedDict):
    steps: Annotated[list[str], operator.add]


def _graph(crash: dict[str, bool]):
    def a(state: _State) -> dict:
        return {"steps": ["a"]}

    def b(state: _State) -> dict:
        if crash["on"]:
            raise RuntimeError("killed")
        return {"steps": ["b"]}

    g = StateGraph(_State)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g


def _resumes(saver) -> None:
    crash = {"on": True}
    app = _graph(crash).compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t-1"}}
    with pytest.raises(RuntimeError, match="killed"):
        app.invoke({"steps": []}, cfg)
    assert app.get_state(cfg).next == ("b",)
    crash["on"] = False
    assert app.invoke(None, cfg)["steps"] == ["a", "b"]  # "a" ran once: resumed at "b"


def test_sqlite_file_per_agent_under_home(settings):
    with checkpointer("demo-agent") as saver:
        assert type(saver).__name__ == "SqliteSaver"
        _resumes(saver)
    path = sqlite_path("demo-agent")
    assert path == Path(settings.home) / "demo-agent" / "checkpoints.sqlite" and path.stat().st_size > 0
    with checkpointer("demo-agent") as saver:  # a new process would see the finished thread
        app = _graph({"on": False}).compile(checkpointer=saver)
        assert app.get_state({"configurable": {"thread_id": "t-1"}}).values["steps"] == ["a", "b"]


def test_explicit_path(tmp_path):
    with checkpointer("demo-agent", path=tmp_path / "sub" / "cp.sqlite") as saver:
        _resumes(saver)
    assert (tmp_path / "sub" / "cp.sqlite").exists()


@pytest.mark.parametrize("name", ["", "../up", "A/B", "x" * 80])
def test_bad_names_are_refused(name):
    with pytest.raises(ValueError, match="checkpointer name"), checkpointer(name):
        pass


def test_postgres_when_the_app_db_is_postgres(settings, postgres_url, monkeypatch):
    monkeypatch.setattr(settings, "database_url", postgres_url)
    with checkpointer("demo-agent") as saver:
        assert type(saver).__name__ == "PostgresSaver"
        _resumes(saver)


def _write(saver, thread_id: str, steps: list[str]) -> None:
    app = _graph({"on": False}).compile(checkpointer=saver)
    app.update_state({"configurable": {"thread_id": thread_id}}, {"steps": steps})


def _read(saver, thread_id: str) -> list[str] | None:
    app = _graph({"on": False}).compile(checkpointer=saver)
    return app.get_state({"configurable": {"thread_id": thread_id}}).values.get("steps")


def _namespaces_are_separate() -> None:
    """The same thread id in the jobs' store, in two owners' stores and in another graph's store: four threads."""
    tid = "clinical_got:cgot:case007:0123456789abcdef"  # a job's internal id, which a client could compute
    stores = {
        "jobs": {"name": "ns-graph"},
        "alice": {"name": "ns-graph", "owner": "alice"},
        "bob": {"name": "ns-graph", "owner": "bob"},
        "other graph": {"name": "ns-other"},
    }
    for label, kw in stores.items():
        with checkpointer(**kw) as saver:
            assert _read(saver, tid) is None, f"{label} saw another namespace's thread"
            _write(saver, tid, [label])
    for label, kw in stores.items():
        with checkpointer(**kw) as saver:
            assert _read(saver, tid) == [label], label
    with checkpointer("ns-graph", owner="bob") as saver:
        saver.delete_thread(tid)  # deleting in one namespace leaves the others alone
    with checkpointer("ns-graph") as saver:
        assert _read(saver, tid) == ["jobs"]
    with checkpointer("ns-graph", owner="alice") as saver:
        assert _read(saver, tid) == ["alice"]


def test_namespaces_per_store_and_owner_on_sqlite(settings):
    _namespaces_are_separate()
    assert sqlite_path("ns-graph") == Path(settings.home) / "ns-graph" / "checkpoints.sqlite"
    owned = sqlite_path("ns-graph", owner="alice")
    assert owned.parent != sqlite_path("ns-graph", owner="bob").parent and "alice" not in str(owned)


def test_namespaces_per_store_and_owner_on_postgres(settings, postgres_url, monkeypatch):
    monkeypatch.setattr(settings, "database_url", postgres_url)
    _namespaces_are_separate()


def test_first_use_of_a_postgres_namespace_from_many_threads_at_once(settings, postgres_url, monkeypatch):
    """Eight threads open a new namespace together: one creates its schema and tables, none fails."""
    import threading

    monkeypatch.setattr(settings, "database_url", postgres_url)
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def open_and_write(i: int) -> None:
        try:
            start.wait()
            with checkpointer("ns-race", owner=f"k{i % 2}") as saver:
                _write(saver, f"t{i}", [str(i)])
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with checkpointer("ns-race", owner="k0") as saver:
        assert _read(saver, "t2") == ["2"] and _read(saver, "t1") is None


@pytest.mark.parametrize("owner", ["", "a/b", "../x", "x" * 65])
def test_bad_owners_are_refused(owner):
    with pytest.raises(ValueError, match="checkpoint owner"), checkpointer("demo-agent", owner=owner):
        pass
