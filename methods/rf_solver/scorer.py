"""The edit scorer of spec §7.8: logistic regression on scikit-learn's 8×8 digits.

It is fitted on the same training split as the RF model (never on the held-out images being
edited) and reads 16×16 model outputs after 2×2 average pooling back to the 8×8 grid.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core.lazy import locked_cache
from methods.rf_solver.data import images_to_digits, load_digits_split


@locked_cache(maxsize=1)
def digit_scorer() -> DigitScorer:
    return DigitScorer()


class DigitScorer:
    """Predicts digit labels of 16×16 images in [−1, 1]."""

    def __init__(self, seed: int = 0) -> None:
        train = load_digits_split("train")
        self.clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=0.5, random_state=seed))
        self.clf.fit(train.raw, train.labels.numpy())

    def predict(self, images: torch.Tensor) -> np.ndarray:
        return self.clf.predict(images_to_digits(images))

    def accuracy(self, images: torch.Tensor, labels: torch.Tensor | np.ndarray) -> float:
        return float((self.predict(images) == np.asarray(labels)).mean())

    def held_out_accuracy(self) -> float:
        test = load_digits_split("test")
        return float((self.clf.predict(test.raw) == test.labels.numpy()).mean())
