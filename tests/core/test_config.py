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


def test_defame_section_nested_env_and_legacy_names(tmp_path, monkeypatch):
    """``settings.defame`` reads PAPERWORKS_DEFAME__X; the old PAPERWORKS_DEFAME_X fills what is not set."""
    for var in [v for v in list(__import__("os").environ) if v.upper().startswith("PAPERWORKS_DEFAME")]:
        monkeypatch.delenv(var)
    assert Settings(home=tmp_path).defame.search_backend == "corpus"
    monkeypatch.setenv("PAPERWORKS_DEFAME__SEARCH_BACKEND", "serper")
    monkeypatch.setenv("PAPERWORKS_DEFAME_SERPER_API_KEY", "k-old")
    monkeypatch.setenv("PAPERWORKS_DEFAME_REQUEST_TIMEOUT_S", "3.5")
    s = Settings(home=tmp_path)
    assert s.defame.search_backend == "serper" and s.defame.request_timeout_s == 3.5
    assert s.defame.serper_api_key.get_secret_value() == "k-old" and "k-old" not in repr(s)
    monkeypatch.setenv("PAPERWORKS_DEFAME__SERPER_API_KEY", "k-new")
    assert Settings(home=tmp_path).defame.serper_api_key.get_secret_value() == "k-new"


def test_defame_section_rejects_bad_values(tmp_path, monkeypatch):
    import pytest
    from pydantic import ValidationError

    monkeypatch.setenv("PAPERWORKS_DEFAME__SEARCH_BACKEND", "bing")
    with pytest.raises(ValidationError, match="search_backend"):
        Settings(home=tmp_path)


def test_defame_context_reads_the_application_settings(settings):
    from agents.defame.config import DefameContext, DefameSettings

    assert DefameContext().external() is settings.defame
    own = DefameSettings(search_backend="serper")
    assert DefameContext(settings=own).external() is own
