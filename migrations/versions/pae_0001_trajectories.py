"""pae: runs, tasks, trajectories, steps, screenshots, verdicts

Revision ID: pae_0001
Revises: 0001_initial
Create Date: 2026-11-29
"""
import sqlalchemy as sa
from alembic import op

revision = "pae_0001"
down_revision = "0001_initial"
branch_labels = ("pae",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pae_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("policy", sa.Text(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "pae_tasks",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("pae_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("task_key", sa.String(200), nullable=False),
        sa.Column("site", sa.String(40), nullable=False),
        sa.Column("split", sa.String(20), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("start_path", sa.String(300), nullable=False),
        sa.Column("reference", sa.JSON(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("template", sa.String(60), nullable=False),
        sa.Column("proposer", sa.String(20), nullable=False),
        sa.UniqueConstraint("run_id", "task_key", "split", name="uq_pae_tasks_run_key_split"),
    )
    op.create_index("ix_pae_tasks_run_id", "pae_tasks", ["run_id"])
    op.create_table(
        "pae_trajectories",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(32), sa.ForeignKey("pae_runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("task_id", sa.String(32), sa.ForeignKey("pae_tasks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(20), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("policy", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("n_steps", sa.Integer(), nullable=False),
        sa.Column("format_errors", sa.Integer(), nullable=False),
        sa.Column("timed_out", sa.Boolean(), nullable=False),
        sa.Column("reward", sa.Float(), nullable=True),
        sa.Column("oracle_reward", sa.Float(), nullable=True),
        sa.Column("judge_reward", sa.Float(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("final_url", sa.Text(), nullable=False),
        sa.Column("final_text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("run_id", "iteration", "phase", "slot", name="uq_pae_traj_slot"),
    )
    op.create_index("ix_pae_trajectories_run_id", "pae_trajectories", ["run_id"])
    op.create_index("ix_pae_trajectories_task_id", "pae_trajectories", ["task_id"])
    op.create_table(
        "pae_steps",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("trajectory_id", sa.String(32), sa.ForeignKey("pae_trajectories.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("thought", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("format_error", sa.Boolean(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("page_text", sa.Text(), nullable=False),
        sa.Column("elements", sa.Text(), nullable=False),
        sa.Column("prompt", sa.JSON(), nullable=False),
        sa.UniqueConstraint("trajectory_id", "idx", name="uq_pae_steps_traj_idx"),
    )
    op.create_index("ix_pae_steps_trajectory_id", "pae_steps", ["trajectory_id"])
    op.create_table(
        "pae_screenshots",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("step_id", sa.String(32), sa.ForeignKey("pae_steps.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
    )
    op.create_index("ix_pae_screenshots_step_id", "pae_screenshots", ["step_id"])
    op.create_index("ix_pae_screenshots_sha256", "pae_screenshots", ["sha256"])
    op.create_table(
        "pae_verdicts",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("trajectory_id", sa.String(32), sa.ForeignKey("pae_trajectories.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("evaluator", sa.String(200), nullable=False),
        sa.Column("reward", sa.Float(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("called_model", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("trajectory_id", "evaluator", name="uq_pae_verdicts_traj_eval"),
    )
    op.create_index("ix_pae_verdicts_trajectory_id", "pae_verdicts", ["trajectory_id"])


def downgrade() -> None:
    for table, indexes in (("pae_verdicts", ["ix_pae_verdicts_trajectory_id"]),
                           ("pae_screenshots", ["ix_pae_screenshots_sha256", "ix_pae_screenshots_step_id"]),
                           ("pae_steps", ["ix_pae_steps_trajectory_id"]),
                           ("pae_trajectories", ["ix_pae_trajectories_task_id", "ix_pae_trajectories_run_id"]),
                           ("pae_tasks", ["ix_pae_tasks_run_id"])):
        for ix in indexes:
            op.drop_index(ix, table_name=table)
        op.drop_table(table)
    op.drop_table("pae_runs")
