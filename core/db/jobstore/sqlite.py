"""The SQLite job store: the portable store, with the report written in one ``INSERT … ON CONFLICT``.

SQLite has no notification channel: API clients waiting for a job re-read its row (with a backoff).
Its transactions are serialised by the database file's lock (WAL mode, a 30 s busy timeout: see
:func:`core.db.session.get_engine`); every commit is durable.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from core.db.jobstore.sql import SqlJobStore
from core.db.models import ReportRow, new_id, utcnow


class SQLiteJobStore(SqlJobStore):
    """:class:`~core.db.jobstore.base.JobStore` on SQLite."""

    def _upsert_report(self, s: Session, job_id: str | None, *, title: str, summary: str, body: dict[str, Any]) -> str:
        if job_id is None:
            return super()._upsert_report(s, job_id, title=title, summary=summary, body=body)
        values = {"title": title[:500], "summary": summary, "body": body, "created_at": utcnow()}
        stmt = insert(ReportRow).values(id=new_id(), job_id=job_id, **values)
        stmt = stmt.on_conflict_do_update(index_elements=[ReportRow.job_id], set_=values).returning(ReportRow.id)
        return s.execute(stmt).scalar_one()
