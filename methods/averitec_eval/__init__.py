"""The AVeriTeC evaluation: METEOR with offline NLTK data, Hungarian evidence matching, veracity metrics."""

from __future__ import annotations

from core.lazy import lazy_exports

# loaded on first use, so that importing a submodule (the job registry imports jobs.py) does not import
# the heavy ones (torch, scikit-learn) behind it
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "pairwise_meteor": "methods.averitec_eval.meteor",
        "label_metrics": "methods.averitec_eval.metrics",
        "ensure_nltk_data": "methods.averitec_eval.nltk_data",
        "AveritecScores": "methods.averitec_eval.scorer",
        "score": "methods.averitec_eval.scorer",
    },
)
