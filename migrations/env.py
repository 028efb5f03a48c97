"""Alembic environment: reuses the application's settings and the metadata of every package.

The platform's tables live in ``core/db/models.py``; a method or agent that keeps its own
tables defines them on the same ``Base`` in ``<methods|agents>/<pkg>/models.py``, which
:func:`import_all_models` imports so autogenerate and ``compare_metadata`` see them all.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from alembic import context
from sqlalchemy import engine_from_config, pool

from core.config import get_settings
from core.db.models import Base

MODEL_PACKAGES = ("methods", "agents")


def import_all_models() -> list[str]:
    """Import every ``<top>.<pkg>.models`` module (the ORM tables of each package); their names."""
    found = []
    for top in MODEL_PACKAGES:
        pkg = importlib.import_module(top)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            name = f"{top}.{info.name}.models"
            if info.ispkg and importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
                found.append(name)
    return found


import_all_models()
config = context.config
url = config.get_main_option("sqlalchemy.url") or str(get_settings().database_url)
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(
        url=url, target_metadata=target_metadata, literal_binds=True, render_as_batch=url.startswith("sqlite")
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = engine_from_config({"sqlalchemy.url": url}, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with connectable.connect() as connection:
        context.configure(
            connection=connection, target_metadata=target_metadata, render_as_batch=url.startswith("sqlite")
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
