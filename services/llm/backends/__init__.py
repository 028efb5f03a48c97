"""Text-generation backends of the ``local`` litellm provider."""

from services.llm.backends.base import (
    Backend,
    BackendUnavailable,
    GenerationRequest,
    GenerationResult,
)
from services.llm.backends.constraints import ConstraintError
from services.llm.backends.factory import get_backend

__all__ = ["Backend", "BackendUnavailable", "ConstraintError", "GenerationRequest", "GenerationResult",
           "get_backend"]
