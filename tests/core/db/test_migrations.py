"""Migrations upgrade and downgrade on SQLite and on the machine's PostgreSQL."""

import pytest
from sqlalchemy import create_engine, inspect

from core.db import migrate

CORE = {"jobs", "reports", "artifacts", "api_keys"}


def _tables(url):
    eng = create_engine(url)
    try:
        return set(inspect(eng).get_table_names())
    finally:
        eng.dispose()


def _roundtrip(url):
    migrate.upgrade(url)
    assert CORE <= _tables(url)
    assert migrate.current_heads(url)
    migrate.downgrade(url, "base")
    assert not (CORE & _tables(url))
    assert _tables(url) <= {"alembic_version"}  # every branch's tables are gone too
    migrate.upgrade(url)
    assert CORE <= _tables(url)


def test_sqlite_upgrade_downgrade(tmp_path):
    _roundtrip(f"sqlite:///{tmp_path / 'm.db'}")


@pytest.mark.integration
def test_postgres_upgrade_downgrade(postgres_url):
    _roundtrip(postgres_url)
