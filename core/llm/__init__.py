"""The LLM gateway (litellm), the local model registry and embeddings."""

from core.llm.gateway import Completion, complete, ensure_providers, scripted, stream, track_usage
from core.llm.local_models import DEFAULT_LOCAL_MODEL, LocalModelError, get_local_model, model_hash

__all__ = [
    "Completion",
    "DEFAULT_LOCAL_MODEL",
    "LocalModelError",
    "complete",
    "ensure_providers",
    "get_local_model",
    "model_hash",
    "scripted",
    "stream",
    "track_usage",
]
