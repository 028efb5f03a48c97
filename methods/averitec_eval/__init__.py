"""The AVeriTeC evaluation: METEOR with offline NLTK data, Hungarian evidence matching, veracity metrics."""

from methods.averitec_eval.meteor import pairwise_meteor
from methods.averitec_eval.metrics import label_metrics
from methods.averitec_eval.nltk_data import ensure_nltk_data
from methods.averitec_eval.scorer import AveritecScores, score

__all__ = ["AveritecScores", "ensure_nltk_data", "label_metrics", "pairwise_meteor", "score"]
