"""Settings: embedded defaults and environment overrides."""

from pathlib import Path

from core.config import Settings


def test_embedded_defaults_live_under_home(tmp_path, monkeypatch):
    for var in ("PAPERWORKS_DATABASE_URL", "PAPERWORKS_BROKER_URL", "PAPERWORKS_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    s = Settings(home=tmp_path)
    assert s.database_url == f"sqlite:///{tmp_path / 'paperworks.db'}"
    assert s.broker_url == f"sqla+sqlite:///{tmp_path / 'broker.db'}"
    assert Path(s.chroma_path) == tmp_path / "chroma"
    assert Path(s.artifact_dir) == tmp_path / "artifacts"
    assert s.llm_model.startswith("local/")
    assert not s.is_postgres
    assert s.queues == ["cpu"]


def test_env_overrides_point_at_real_servers(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERWORKS_HOME", str(tmp_path))
    monkeypatch.setenv("PAPERWORKS_DATABASE_URL", "postgresql+psycopg://u@db:5432/pw")
    monkeypatch.setenv("PAPERWORKS_BROKER_URL", "redis://redis:6379/0")
    monkeypatch.setenv("PAPERWORKS_WORKER_QUEUES", "gpu, cpu")
    monkeypatch.setenv("PAPERWORKS_LLM_API_KEY", "sk-secret")
    s = Settings()
    assert s.is_postgres and s.broker_url.startswith("redis://")
    assert s.queues == ["gpu", "cpu"]
    assert "sk-secret" not in repr(s)  # secrets never show in logs


def test_allowed_hosts_are_parsed(tmp_path):
    s = Settings(home=tmp_path, allowed_hosts="Example.org, intranet.local ,")
    assert s.extra_allowed_hosts == {"example.org", "intranet.local"}
