"""owned_objects: stored objects (uploads, server files, checkpoints) a key may name in job params (issue #48)

A job's params can name things stored on the server: an uploaded image's SHA-256, a DEFAME image path,
an any4 checkpoint id, a PAE adapter. Only the key that stored one (or an admin) may name it; artifacts
keep belonging to their job's owner. One row per (kind, ref, owner).

Revision ID: 0003_owned_objects
Revises: 0002_key_scopes
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_owned_objects"
down_revision = "0002_key_scopes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "owned_objects",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("ref", sa.String(1000), nullable=False),
        sa.Column("owner", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("kind", "ref", "owner", name="uq_owned_objects_kind_ref_owner"),
    )
    op.create_index("ix_owned_objects_owner", "owned_objects", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_owned_objects_owner", table_name="owned_objects")
    op.drop_table("owned_objects")
