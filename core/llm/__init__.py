"""The LLM gateway (litellm), the local model registry and embeddings."""

from core.llm.gateway import (
    Completion,
    Scores,
    ScoringUnsupported,
    complete,
    ensure_providers,
    score,
    scripted,
    stream,
    track_usage,
)
from core.llm.local_models import (
    DEFAULT_LOCAL_MODEL,
    LocalModelError,
    get_local_model,
    model_available,
    model_hash,
)

__all__ = [
    "Completion",
    "DEFAULT_LOCAL_MODEL",
    "LocalModelError",
    "complete",
    "ensure_providers",
    "get_local_model",
    "model_available",
    "model_hash",
    "Scores",
    "ScoringUnsupported",
    "score",
    "scripted",
    "stream",
    "track_usage",
]
