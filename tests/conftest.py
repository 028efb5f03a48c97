"""Shared fixtures: an isolated PAPERWORKS_HOME per test session, migrated SQLite, helpers.

Every test runs against a temporary home directory (SQLite database, Chroma
directory, artifacts) so nothing touches a user's ~/.paperworks. The converted
local model is cached in a shared directory so it is converted once per machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_SESSION_HOME = Path(tempfile.mkdtemp(prefix="pw-test-home-"))
# The converted SmolLM2 (and other caches) survive between runs: the same cache
# `paperworks prepare` fills (a converted model is the same bytes whoever converts it).
_CACHE = Path(os.environ.get("PAPERWORKS_TEST_CACHE", Path.home() / ".paperworks" / "cache"))

os.environ["PAPERWORKS_HOME"] = str(_SESSION_HOME)
os.environ["PAPERWORKS_CACHE_DIR"] = str(_CACHE)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

POSTGRES_URL = os.environ.get("PAPERWORKS_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("PAPERWORKS_TEST_REDIS", "redis://127.0.0.1:6379/0")
RABBIT_URL = os.environ.get("PAPERWORKS_TEST_AMQP", "amqp://guest:guest@127.0.0.1:5672//")


@pytest.fixture(scope="session", autouse=True)
def _migrated_home():
    """Migrate the session's SQLite database once."""
    from core.config import get_settings
    from core.db import migrate

    get_settings.cache_clear()
    migrate.upgrade()
    yield _SESSION_HOME
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture
def settings():
    from core.config import get_settings

    return get_settings()


@pytest.fixture
def data_dir(settings) -> Path:
    """The shared benchmark slices; tests needing them skip with a reason when absent."""
    d = Path(settings.data_dir)
    if not d.exists():
        pytest.skip(f"benchmark data not found at {d}")
    return d


@pytest.fixture
def ephemeral_store():
    """A Chroma ephemeral client (real Chroma, in memory), reset after the test."""
    from core.vectorstore import VectorStore, make_client

    client = make_client(ephemeral=True)
    store = VectorStore(client)
    yield store
    for name in store.list_collections():
        client.delete_collection(name)


@pytest.fixture
def scripted_llm():
    """``scripted_llm(name, replies_or_fn, scorer=None)`` installs a script (and a scorer of given replies)
    for model ``scripted/<name>``."""
    from core.llm import gateway

    names = []

    def install(name, script, scorer=None):
        gateway.ensure_providers()
        from core.llm.providers import SCRIPTED

        SCRIPTED.set_script(name, script, scorer)
        names.append(name)
        return SCRIPTED

    yield install
    from core.llm.providers import SCRIPTED

    for n in names:
        SCRIPTED.clear(n)


@pytest.fixture
def api_key():
    """A fresh API key (plaintext) in the session database."""
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        _, key = crud.create_api_key(s, name="test")
    return key


@pytest.fixture
def postgres_url():
    """A fresh database on the machine's PostgreSQL, dropped afterwards (skips if the server is down)."""
    import uuid

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    url = make_url(POSTGRES_URL)
    name = f"pw_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except OperationalError as exc:  # pragma: no cover - .ci/run starts PostgreSQL
        pytest.fail(f"PostgreSQL is not reachable at {POSTGRES_URL}: {exc}")
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        from core.db.session import get_engine

        get_engine.cache_clear()
        with admin.connect() as conn:
            conn.execute(text(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))
            # FORCE (PostgreSQL 13+): a worker still running (its reaper polls) cannot slip a connection in
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def api_client(api_key):
    """A FastAPI TestClient of the whole API, authenticated with a fresh key."""
    from fastapi.testclient import TestClient

    from services.api.main import create_app

    with TestClient(create_app()) as client:
        client.headers["Authorization"] = f"Bearer {api_key}"
        yield client


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` are skipped, saying why, where torch sees no CUDA (``make test-gpu`` runs only them)."""
    gpu = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason=f"gpu: needs CUDA (torch {torch.__version__}: torch.cuda.is_available() is False)")
    for item in gpu:
        item.add_marker(skip)
