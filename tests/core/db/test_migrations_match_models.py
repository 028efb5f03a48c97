"""The migrations create exactly the tables the ORM models declare (every package's)."""

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from core.db import migrate
from core.db.models import Base


def _all_models() -> set[str]:
    mods = set()
    for top in ("methods", "agents"):
        for info in pkgutil.iter_modules(importlib.import_module(top).__path__):
            try:
                importlib.import_module(f"{top}.{info.name}.models")
            except ModuleNotFoundError as exc:
                if exc.name != f"{top}.{info.name}.models":
                    raise
                continue
            mods.add(f"{top}.{info.name}.models")
    return mods


def test_fresh_sqlite_at_heads_matches_the_full_metadata(tmp_path):
    assert "agents.pae.models" in _all_models()
    url = f"sqlite:///{tmp_path / 'm.db'}"
    migrate.upgrade(url)
    assert {"jobs", "reports", "artifacts", "api_keys", "pae_runs", "pae_steps"} <= set(Base.metadata.tables)
    eng = create_engine(url)
    try:
        with eng.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        eng.dispose()
    assert diff == []


def test_env_py_sees_every_package_table(tmp_path):
    """Autogenerate through migrations/env.py, in a fresh process that imported no models: no diff."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    migrate.upgrade(url)
    code = f"from alembic import command; from core.db import migrate; command.check(migrate.alembic_config({url!r}))"
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert res.returncode == 0, res.stderr[-2000:]
