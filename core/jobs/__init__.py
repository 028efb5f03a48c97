"""Job types, their lifecycle and the Report they return."""

from core.jobs.context import JobCancelled, JobContext, TransientError, null_context
from core.jobs.registry import (
    InvalidOptions,
    InvalidParams,
    MethodSpec,
    ReproducerOptions,
    ReproducerSpec,
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
    registry_snapshot,
)
from core.jobs.report import ArtifactRef, Report, Section, Table

__all__ = [
    "ArtifactRef",
    "InvalidOptions",
    "InvalidParams",
    "JobCancelled",
    "JobContext",
    "MethodSpec",
    "Report",
    "ReproducerOptions",
    "ReproducerSpec",
    "Section",
    "Table",
    "TransientError",
    "UnknownMethod",
    "get_method",
    "get_reproducer",
    "list_methods",
    "list_preparers",
    "list_reproducers",
    "load_all",
    "null_context",
    "register_method",
    "register_preparer",
    "register_reproducer",
    "registry_snapshot",
]
