"""The benchmark's tables (schema owned by ``migrations/versions/clinical_got_0001_tables.py``).

case (one synthetic case of one benchmark config, with its ground truth and PNG paths) → qa_item
(its six QA pairs) ; node_answer (one graph node's prompt and answer for one case in one run and
arm: ``cgot``, ``direct``, ``oracle``…) ; metric (one number of one task for one run and arm).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from core.db.models import Base, new_id, utcnow


class ClinicalCase(Base):
    __tablename__ = "clinical_got_cases"
    __table_args__ = (UniqueConstraint("bench_key", "case_id", name="uq_clinical_got_cases_bench_case"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    bench_key: Mapped[str] = mapped_column(String(32), index=True)
    case_id: Mapped[str] = mapped_column(String(32))
    truth: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    triples: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ClinicalQaItem(Base):
    __tablename__ = "clinical_got_qa_items"
    __table_args__ = (UniqueConstraint("case_pk", "task", name="uq_clinical_got_qa_case_task"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    case_pk: Mapped[str] = mapped_column(
        String(32), ForeignKey("clinical_got_cases.id", ondelete="CASCADE"), index=True
    )
    task: Mapped[str] = mapped_column(String(8))
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ClinicalNodeAnswer(Base):
    __tablename__ = "clinical_got_node_answers"
    __table_args__ = (
        UniqueConstraint("run_id", "arm", "case_pk", "node", name="uq_clinical_got_answers_run_arm_case_node"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(String(64), index=True)
    arm: Mapped[str] = mapped_column(String(40))
    case_pk: Mapped[str] = mapped_column(
        String(32), ForeignKey("clinical_got_cases.id", ondelete="CASCADE"), index=True
    )
    node: Mapped[str] = mapped_column(String(8))
    model: Mapped[str] = mapped_column(String(200), default="")
    source: Mapped[str] = mapped_column(String(12), default="llm")  # llm, oracle, derived, template
    prompt: Mapped[str] = mapped_column(Text, default="")
    answer: Mapped[str] = mapped_column(Text, default="")
    parsed: Mapped[Any] = mapped_column(JSON, nullable=True)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ClinicalMetric(Base):
    __tablename__ = "clinical_got_metrics"
    __table_args__ = (UniqueConstraint("run_id", "arm", "task", "name", name="uq_clinical_got_metrics_run_arm_task"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(String(64), index=True)
    arm: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(String(200), default="")
    task: Mapped[str] = mapped_column(String(8))
    name: Mapped[str] = mapped_column(String(60))
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
