"""Text-generation backends of the ``local`` litellm provider."""

from core.llm.backends.base import (
    Backend,
    BackendUnavailable,
    GenerationRequest,
    GenerationResult,
)
from core.llm.backends.constraints import ConstraintError
from core.llm.backends.factory import get_backend

__all__ = ["Backend", "BackendUnavailable", "ConstraintError", "GenerationRequest", "GenerationResult", "get_backend"]
