"""The AVeriTeC evaluation: METEOR with offline NLTK data, Hungarian evidence matching, veracity metrics."""

from __future__ import annotations

import importlib
from typing import Any

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
_EXPORTS = {
    "pairwise_meteor": "methods.averitec_eval.meteor",
    "label_metrics": "methods.averitec_eval.metrics",
    "ensure_nltk_data": "methods.averitec_eval.nltk_data",
    "AveritecScores": "methods.averitec_eval.scorer",
    "score": "methods.averitec_eval.scorer",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'methods.averitec_eval' has no attribute {name!r}")
