"""The harness's tables (schema owned by ``migrations/versions/llm_eval_0001_outputs.py``).

A run is one evaluation of one model on one benchmark; every generation it asked for is an
output row keyed by a caller-chosen ``item_key`` (``medqa/MR/5/v1/r3``), unique per run, so a
re-run or a redelivered batch job skips what is already stored.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from core.db.models import Base, new_id, utcnow


class LlmEvalRun(Base):
    __tablename__ = "llm_eval_runs"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    benchmark: Mapped[str] = mapped_column(String(60), index=True)
    model: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20), default="running")
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class LlmEvalOutput(Base):
    __tablename__ = "llm_eval_outputs"
    __table_args__ = (UniqueConstraint("run_id", "item_key", name="uq_llm_eval_outputs_run_key"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(String(32), ForeignKey("llm_eval_runs.id", ondelete="CASCADE"), index=True)
    item_key: Mapped[str] = mapped_column(String(200))
    prompt: Mapped[str] = mapped_column(Text, default="")
    output: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
