"""Lazily created shared resources survive concurrent first use (issue #48 part 3).

Right after a restart, the first concurrent requests that opened the vector store failed: the embedded
Chroma client was created twice at once (``KeyError: '<home>/chroma'``), because ``functools.lru_cache``
does not serialise first calls. Each shared resource is asked for by eight threads at the same moment,
on an empty cache, and must come back as one object with no error.
"""

from __future__ import annotations

import threading

import pytest


def _together(n: int, fn) -> list:
    start = threading.Barrier(n)
    out: list = [None] * n

    def one(i: int) -> None:
        start.wait()
        try:
            out[i] = fn()
        except BaseException as exc:  # noqa: BLE001 - returned for the assertions
            out[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def _one_object(results: list) -> object:
    errors = [r for r in results if isinstance(r, BaseException)]
    assert errors == [], errors
    assert len({id(r) for r in results}) == 1
    return results[0]


@pytest.mark.parametrize("attempt", range(4))
def test_the_embedded_vector_store_opened_by_many_threads_at_once(settings, tmp_path, monkeypatch, attempt):
    from core.vectorstore import store

    monkeypatch.setattr(settings, "chroma_path", tmp_path / f"chroma{attempt}")
    monkeypatch.setattr(settings, "chroma_host", None)
    store._cached.cache_clear()
    try:
        vs = _one_object(_together(8, lambda: (s := store.get_vectorstore(), s.heartbeat())[0]))
        assert vs is store.get_vectorstore()
    finally:
        store._cached.cache_clear()


def test_engines_settings_and_artifact_store_built_once(settings, tmp_path, monkeypatch):
    from core.artifacts import store as artifacts
    from core.db import session

    session.get_engine.cache_clear()
    artifacts._store.cache_clear()
    url = f"sqlite:///{tmp_path / 'x.db'}"
    try:
        _one_object(_together(8, lambda: session.get_engine(url)))
        _one_object(_together(8, lambda: artifacts.get_artifact_store()))
    finally:
        session.get_engine.cache_clear()
        artifacts._store.cache_clear()


def test_every_shared_resource_uses_the_locked_cache():
    """The lazily built clients, engines and models of core and the API are :class:`core.lazy.LockedCache`s."""
    from core import config
    from core.artifacts import store as artifacts
    from core.db import jobstore, session
    from core.db.jobstore import postgres as pg_jobstore
    from core.lazy import LockedCache
    from core.llm import embeddings, local_models
    from core.llm.backends import chat, factory
    from core.vectorstore import store
    from services.api import sse

    for fn in (
        config.get_settings,
        session.get_engine,
        jobstore._store,
        pg_jobstore._engine,
        artifacts._store,
        store._cached,
        embeddings.get_embedder,
        local_models._load,
        chat._load_tokenizer,
        factory._build,
        sse._listener_for,
    ):
        assert isinstance(fn, LockedCache), fn
