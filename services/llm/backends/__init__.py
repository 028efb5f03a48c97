"""Text-generation backends of the ``local`` litellm provider."""

from services.llm.backends.base import (
    Backend,
    BackendUnavailable,
    GenerationRequest,
    GenerationResult,
    get_backend,
)
from services.llm.backends.constraints import ConstraintError

__all__ = ["Backend", "BackendUnavailable", "ConstraintError", "GenerationRequest", "GenerationResult",
           "get_backend"]
