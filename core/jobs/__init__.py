"""Job types, their lifecycle and the Report they return."""

from core.jobs.context import JobCancelled, JobContext, TransientError, null_context
from core.jobs.registry import (
    InvalidParams,
    MethodSpec,
    UnknownMethod,
    get_method,
    get_reproducer,
    list_methods,
    list_preparers,
    list_reproducers,
    load_all,
    register_method,
    register_preparer,
    register_reproducer,
)
from core.jobs.report import ArtifactRef, Report, Section, Table

__all__ = [
    "ArtifactRef", "InvalidParams", "JobCancelled", "JobContext", "MethodSpec", "Report", "Section", "Table",
    "TransientError", "UnknownMethod", "get_method", "get_reproducer", "list_methods", "list_preparers",
    "list_reproducers", "load_all", "null_context", "register_method", "register_preparer", "register_reproducer",
]
