"""PAE's tables in the application database (schema owned by ``migrations/versions/pae_0001_*.py``).

run → tasks (proposed / held-out) → trajectories (one rollout or test episode each,
unique per (run, iteration, phase, slot) so re-running a node is idempotent) → steps
(reply, thought, action, page state, the prompt messages BC trains on) → screenshots
(artifact-store digests), and verdicts (one per evaluator: oracle, LLM judge, random).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from core.db.models import Base, new_id, utcnow


class PaeRun(Base):
    __tablename__ = "pae_runs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200), default="")
    status: Mapped[str] = mapped_column(String(20), default="running")
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    iteration: Mapped[int] = mapped_column(Integer, default=0)
    policy: Mapped[str] = mapped_column(Text, default="")  # current policy: model string
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class PaeTask(Base):
    __tablename__ = "pae_tasks"
    __table_args__ = (UniqueConstraint("run_id", "task_key", "split", name="uq_pae_tasks_run_key_split"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(String(32), ForeignKey("pae_runs.id", ondelete="CASCADE"), index=True)
    task_key: Mapped[str] = mapped_column(String(200))
    site: Mapped[str] = mapped_column(String(40))
    split: Mapped[str] = mapped_column(String(20))  # train, test, heldout_site, webarena
    question: Mapped[str] = mapped_column(Text)
    start_path: Mapped[str] = mapped_column(String(300), default="/")
    reference: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    plan: Mapped[list[Any]] = mapped_column(JSON, default=list)
    template: Mapped[str] = mapped_column(String(60), default="")
    proposer: Mapped[str] = mapped_column(String(20), default="template")


class PaeTrajectory(Base):
    __tablename__ = "pae_trajectories"
    __table_args__ = (UniqueConstraint("run_id", "iteration", "phase", "slot", name="uq_pae_traj_slot"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(String(32), ForeignKey("pae_runs.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str] = mapped_column(String(32), ForeignKey("pae_tasks.id", ondelete="CASCADE"), index=True)
    iteration: Mapped[int] = mapped_column(Integer)
    phase: Mapped[str] = mapped_column(String(20))  # rollout, test, demo
    slot: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(Text, default="")
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    n_steps: Mapped[int] = mapped_column(Integer, default=0)
    format_errors: Mapped[int] = mapped_column(Integer, default=0)
    timed_out: Mapped[bool] = mapped_column(Boolean, default=False)
    reward: Mapped[float | None] = mapped_column(Float, nullable=True)  # the training reward
    oracle_reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    judge_reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    final_url: Mapped[str] = mapped_column(Text, default="")  # the state after the last step
    final_text: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PaeStep(Base):
    __tablename__ = "pae_steps"
    __table_args__ = (UniqueConstraint("trajectory_id", "idx", name="uq_pae_steps_traj_idx"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    trajectory_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("pae_trajectories.id", ondelete="CASCADE"), index=True
    )
    idx: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(Text, default="")
    reply: Mapped[str] = mapped_column(Text, default="")
    thought: Mapped[str] = mapped_column(Text, default="")
    action: Mapped[str] = mapped_column(Text, default="")
    format_error: Mapped[bool] = mapped_column(Boolean, default=False)
    message: Mapped[str] = mapped_column(Text, default="")
    page_text: Mapped[str] = mapped_column(Text, default="")
    elements: Mapped[str] = mapped_column(Text, default="")
    prompt: Mapped[list[Any]] = mapped_column(JSON, default=list)


class PaeScreenshot(Base):
    __tablename__ = "pae_screenshots"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    step_id: Mapped[str] = mapped_column(String(32), ForeignKey("pae_steps.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20), default="before")  # the state the step acted on, or "final"
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    width: Mapped[int] = mapped_column(Integer, default=1024)
    height: Mapped[int] = mapped_column(Integer, default=768)


class PaeVerdict(Base):
    __tablename__ = "pae_verdicts"
    __table_args__ = (UniqueConstraint("trajectory_id", "evaluator", name="uq_pae_verdicts_traj_eval"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    trajectory_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("pae_trajectories.id", ondelete="CASCADE"), index=True
    )
    evaluator: Mapped[str] = mapped_column(String(200))
    reward: Mapped[float] = mapped_column(Float)
    text: Mapped[str] = mapped_column(Text, default="")
    called_model: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
