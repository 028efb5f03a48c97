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
