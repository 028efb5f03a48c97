"""clinical_got: case, qa_item, node_answer and metric tables

Revision ID: clinical_got_0001
Revises: 0001_initial
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "clinical_got_0001"
down_revision = "0001_initial"
branch_labels = ("clinical_got",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "clinical_got_cases",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("bench_key", sa.String(32), nullable=False),
        sa.Column("case_id", sa.String(32), nullable=False),
        sa.Column("truth", sa.JSON(), nullable=False),
        sa.Column("triples", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("bench_key", "case_id", name="uq_clinical_got_cases_bench_case"),
    )
    op.create_index("ix_clinical_got_cases_bench_key", "clinical_got_cases", ["bench_key"])
    op.create_table(
        "clinical_got_qa_items",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("case_pk", sa.String(32), sa.ForeignKey("clinical_got_cases.id", ondelete="CASCADE"), nullable=False),
        sa.Column("task", sa.String(8), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.JSON(), nullable=False),
        sa.UniqueConstraint("case_pk", "task", name="uq_clinical_got_qa_case_task"),
    )
    op.create_index("ix_clinical_got_qa_items_case_pk", "clinical_got_qa_items", ["case_pk"])
    op.create_table(
        "clinical_got_node_answers",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("arm", sa.String(40), nullable=False),
        sa.Column("case_pk", sa.String(32), sa.ForeignKey("clinical_got_cases.id", ondelete="CASCADE"), nullable=False),
        sa.Column("node", sa.String(8), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("source", sa.String(12), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("parsed", sa.JSON(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "arm", "case_pk", "node", name="uq_clinical_got_answers_run_arm_case_node"),
    )
    op.create_index("ix_clinical_got_node_answers_run_id", "clinical_got_node_answers", ["run_id"])
    op.create_index("ix_clinical_got_node_answers_case_pk", "clinical_got_node_answers", ["case_pk"])
    op.create_table(
        "clinical_got_metrics",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("arm", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("task", sa.String(8), nullable=False),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "arm", "task", "name", name="uq_clinical_got_metrics_run_arm_task"),
    )
    op.create_index("ix_clinical_got_metrics_run_id", "clinical_got_metrics", ["run_id"])


def downgrade() -> None:
    op.drop_table("clinical_got_metrics")
    op.drop_table("clinical_got_node_answers")
    op.drop_table("clinical_got_qa_items")
    op.drop_table("clinical_got_cases")
