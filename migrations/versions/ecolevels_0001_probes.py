"""ecolevels: the probe registry

Revision ID: ecolevels_0001
Revises: 0001_initial
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "ecolevels_0001"
down_revision = "0001_initial"
branch_labels = ("ecolevels",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ecolevels_probes",
        sa.Column("id", sa.String(60), primary_key=True),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ecolevels_probes")
