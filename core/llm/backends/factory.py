"""The backend factory: picks and caches a local text-generation backend by kind.

Kept apart from :mod:`core.llm.backends.base` (the interface) so the backends import
the interface and the factory imports the backends, never the other way round.
"""

from __future__ import annotations

import functools
import logging

from core.llm.backends.base import BACKENDS, Backend, BackendUnavailable

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def get_backend(kind: str, model_name: str) -> Backend:
    """A cached backend instance for a local model.

    Raises:
        ValueError: ``kind`` is not one of :data:`BACKENDS`.
        BackendUnavailable: ``llamacpp`` was asked for explicitly and cannot run.
    """
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
