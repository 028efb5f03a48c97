"""Run the Alembic migrations in ``migrations/`` programmatically."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from core.config import get_settings

_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", (url or str(get_settings().database_url)).replace("%", "%%"))
    return cfg


def upgrade(url: str | None = None, revision: str = "heads") -> None:
    """Bring the schema to ``revision`` (default: every branch head)."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


def current_heads(url: str | None = None) -> set[str]:
    from alembic.runtime.migration import MigrationContext

    from core.db.session import get_engine

    with get_engine(url).connect() as conn:
        return set(MigrationContext.configure(conn).get_current_heads())
