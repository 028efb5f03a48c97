"""Text-generation backends of the ``local`` litellm provider."""

from services.llm.backends.base import Backend, GenerationRequest, GenerationResult, get_backend

__all__ = ["Backend", "GenerationRequest", "GenerationResult", "get_backend"]
