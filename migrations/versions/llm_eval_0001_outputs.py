"""llm_eval: evaluation runs and their raw outputs

Revision ID: llm_eval_0001
Revises: 0001_initial
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "llm_eval_0001"
down_revision = "0001_initial"
branch_labels = ("llm_eval",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_eval_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("benchmark", sa.String(60), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_llm_eval_runs_benchmark", "llm_eval_runs", ["benchmark"])
    op.create_table(
        "llm_eval_outputs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("llm_eval_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_key", sa.String(200), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "item_key", name="uq_llm_eval_outputs_run_key"),
    )
    op.create_index("ix_llm_eval_outputs_run_id", "llm_eval_outputs", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_llm_eval_outputs_run_id", table_name="llm_eval_outputs")
    op.drop_table("llm_eval_outputs")
    op.drop_index("ix_llm_eval_runs_benchmark", table_name="llm_eval_runs")
    op.drop_table("llm_eval_runs")
