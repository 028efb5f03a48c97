"""The backend factory: picks and caches a local text-generation backend by kind.

Kept apart from :mod:`core.llm.backends.base` (the interface) so the backends import
the interface and the factory imports the backends, never the other way round.
"""

from __future__ import annotations

import logging

from core.lazy import MODEL_LOADING, locked_cache
from core.llm.backends.base import BACKENDS, Backend, BackendUnavailable

log = logging.getLogger(__name__)


def get_backend(kind: str, model_name: str) -> Backend:
    """A cached backend instance for a local model, built once even when threads ask at the same time
    (claims checked in parallel: concurrent first imports of transformers' lazy modules fail).

    Raises:
        ValueError: ``kind`` is not one of :data:`BACKENDS`.
        BackendUnavailable: ``llamacpp`` was asked for explicitly and cannot run.
    """
    return _build(kind, model_name)


def build_backend(kind: str, model_name: str) -> Backend:
    """A new (uncached) backend instance; :func:`get_backend` caches these. Same errors."""
    if kind not in BACKENDS:
        raise ValueError(f"unknown local backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    if kind in ("llamacpp", "auto"):
        from core.llm.backends.llamacpp import LlamaCppBackend

        try:
            return LlamaCppBackend(model_name)
        except BackendUnavailable as e:
            if kind == "llamacpp":
                raise
            log.warning("local backend auto: llama.cpp unavailable (%s); falling back to transformers", e)
    from core.llm.backends.hf import TransformersBackend

    return TransformersBackend(model_name)


_build = locked_cache(maxsize=8, lock=MODEL_LOADING)(build_backend)
