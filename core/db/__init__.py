"""The application database: typed models, sessions, keyword-only CRUD, migrations."""

from core.db.models import ApiKey, ArtifactRow, Base, Job, JobStatus, ReportRow
from core.db.session import get_engine, session_scope

__all__ = ["ApiKey", "ArtifactRow", "Base", "Job", "JobStatus", "ReportRow", "get_engine", "session_scope"]
