"""api_keys.scopes: an admin scope that sees every owner's jobs (issue #27: per-key isolation)

Jobs already record the key that submitted them (``jobs.owner``); reports and artifacts
belong to their job. Keys gain scopes: ``admin`` sees everything, others only their own.

Revision ID: 0002_key_scopes
Revises: 0001_initial
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_key_scopes"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("scopes", sa.String(200), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("scopes")
