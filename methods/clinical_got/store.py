"""Writing and reading the benchmark's tables (case, qa_item, node_answer, metric); idempotent upserts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from methods.clinical_got.bench import PreparedCase, qa_items
from methods.clinical_got.models import ClinicalCase, ClinicalMetric, ClinicalNodeAnswer, ClinicalQaItem


def save_case(bench_key: str, case: PreparedCase) -> str:
    """The case's row id (created with its six QA items the first time)."""
    from core.db.session import session_scope

    with session_scope() as s:
        row = s.scalar(
            select(ClinicalCase).where(ClinicalCase.bench_key == bench_key, ClinicalCase.case_id == case.case_id)
        )
        if row is None:
            row = ClinicalCase(bench_key=bench_key, case_id=case.case_id, truth=case.truth, triples=case.triples)
            s.add(row)
            s.flush()
            for qa in qa_items(case.case_id, case.truth):
                s.add(ClinicalQaItem(case_pk=row.id, task=qa["task"], question=qa["question"], answer=qa["answer"]))
        return row.id


def save_answers(run_id: str, arm: str, case_pk: str, model: str, answers: dict[str, dict[str, Any]]) -> None:
    """One row per node (replacing an earlier row of the same run, arm, case and node)."""
    from core.db.session import session_scope

    with session_scope() as s:
        old = {
            a.node: a
            for a in s.scalars(
                select(ClinicalNodeAnswer).where(
                    ClinicalNodeAnswer.run_id == run_id,
                    ClinicalNodeAnswer.arm == arm,
                    ClinicalNodeAnswer.case_pk == case_pk,
                )
            )
        }
        for node, a in answers.items():
            row = old.get(node) or ClinicalNodeAnswer(run_id=run_id, arm=arm, case_pk=case_pk, node=node)
            row.model = model
            row.source = a.get("source", "llm")
            row.prompt = a.get("prompt", "")
            row.answer = a.get("answer", "")
            row.parsed = a.get("parsed")
            row.seconds = float(a.get("seconds", 0.0))
            s.add(row)


def save_metrics(run_id: str, arm: str, model: str, metrics: dict[str, Any]) -> None:
    """Flatten ``{"task1": {"accuracy": ...}, ...}`` into metric rows (numbers only)."""
    from core.db.session import session_scope

    flat = [
        (task.removeprefix("task").replace("_", "."), name, float(v))
        for task, vals in metrics.items()
        if isinstance(vals, dict)
        for name, v in vals.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    with session_scope() as s:
        old = {
            (m.task, m.name): m
            for m in s.scalars(select(ClinicalMetric).where(ClinicalMetric.run_id == run_id, ClinicalMetric.arm == arm))
        }
        for task, name, v in flat:
            row = old.get((task, name)) or ClinicalMetric(run_id=run_id, arm=arm, task=task, name=name)
            row.model = model
            row.value = None if v != v else v
            s.add(row)


def load_metrics(run_id: str) -> list[dict[str, Any]]:
    from core.db.session import session_scope

    with session_scope() as s:
        rows: Iterable[ClinicalMetric] = s.scalars(select(ClinicalMetric).where(ClinicalMetric.run_id == run_id))
        return [{"arm": m.arm, "model": m.model, "task": m.task, "name": m.name, "value": m.value} for m in rows]
