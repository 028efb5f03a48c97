"""A small vision-language substrate: CLIP backbones, captioned datasets, zero-shot helpers.

Public API (the VLM methods import these; loaded lazily so that registering jobs does not import torch):

* :class:`VLBackbone` / :func:`load_backbone` (a CLIP checkpoint folder, never downloads);
* :func:`get_tiny_clip` — the cached tiny CLIP trained here (``methods.vlm.cache``);
* :func:`load_dataset` — named datasets with fixed splits (``methods.vlm.data``);
* :mod:`methods.vlm.zeroshot` — ``text_classifier``, ``classify``, ``retrieval_recall``.
"""

from __future__ import annotations

from core.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "VLBackbone": "methods.vlm.backbone",
        "load_backbone": "methods.vlm.backbone",
        "get_tiny_clip": "methods.vlm.cache",
        "load_dataset": "methods.vlm.data",
    },
)
