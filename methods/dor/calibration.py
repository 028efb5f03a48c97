"""Calibration metrics written from their definitions (spec dor.md §3.5).

Confidence is the maximum softmax probability, the prediction its argmax. With M equal-width
bins B_m = [(m−1)/M, m/M) — the last one closed, [1 − 1/M, 1], so a confidence of exactly 1.0
is counted in it (the sibling repo's binning sends it to an 11th index counted in the weights
but not in the bin statistics; we do not) —

* ECE = Σ_m (|B_m| / N) · |acc(B_m) − conf(B_m)|
* MCE = max_m |acc(B_m) − conf(B_m)| over non-empty bins
* ACE = the ECE sum over M equal-mass bins (confidences sorted, split into M groups of sizes
  differing by at most one)

All three are fractions in [0, 1]; reports multiply by 100.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Bins:
    """Per-bin statistics of a reliability diagram (empty bins have count 0 and NaN acc/conf)."""

    edges: np.ndarray  # (M + 1,)
    count: np.ndarray  # (M,)
    acc: np.ndarray  # (M,)
    conf: np.ndarray  # (M,)


def confidences(logits: torch.Tensor | np.ndarray, labels) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) from logits: max softmax probability and whether its argmax is the label."""
    logits = torch.as_tensor(logits, dtype=torch.float64)
    prob = logits.softmax(-1)
    conf, pred = prob.max(-1)
    return conf.numpy(), (pred == torch.as_tensor(labels)).numpy().astype(np.float64)


def _check(conf, correct) -> tuple[np.ndarray, np.ndarray]:
    conf = np.asarray(conf, dtype=np.float64).ravel()
    correct = np.asarray(correct, dtype=np.float64).ravel()
    if conf.shape != correct.shape or conf.size == 0:
        raise ValueError("confidence and correctness must be non-empty and of equal length")
    if conf.min() < 0 or conf.max() > 1:
        raise ValueError("confidences must lie in [0, 1]")
    return conf, correct


def bin_index(conf: np.ndarray, n_bins: int = 10) -> np.ndarray:
    """Equal-width bin of each confidence; 1.0 goes to the last bin."""
    return np.minimum(np.floor(np.asarray(conf) * n_bins).astype(np.int64), n_bins - 1)


def reliability(conf, correct, n_bins: int = 10) -> Bins:
    conf, correct = _check(conf, correct)
    idx = bin_index(conf, n_bins)
    count = np.bincount(idx, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.bincount(idx, weights=correct, minlength=n_bins) / count
        mean_conf = np.bincount(idx, weights=conf, minlength=n_bins) / count
    return Bins(np.linspace(0, 1, n_bins + 1), count, acc, mean_conf)


def ece(conf, correct, n_bins: int = 10) -> float:
    b = reliability(conf, correct, n_bins)
    nz = b.count > 0
    return float(np.sum(b.count[nz] / b.count.sum() * np.abs(b.acc[nz] - b.conf[nz])))


def mce(conf, correct, n_bins: int = 10) -> float:
    b = reliability(conf, correct, n_bins)
    nz = b.count > 0
    return float(np.max(np.abs(b.acc[nz] - b.conf[nz])))


def ace(conf, correct, n_bins: int = 10) -> float:
    conf, correct = _check(conf, correct)
    order = np.argsort(conf, kind="stable")
    total = 0.0
    for group in np.array_split(order, min(n_bins, conf.size)):
        total += len(group) / conf.size * abs(correct[group].mean() - conf[group].mean())
    return float(total)


def calibration_summary(logits, labels, n_bins: int = 10) -> dict[str, float]:
    """acc, mean confidence, ECE, ACE, MCE (all in %) of one classifier's logits."""
    conf, correct = confidences(logits, labels)
    return {
        "acc": 100 * float(correct.mean()),
        "conf": 100 * float(conf.mean()),
        "ece": 100 * ece(conf, correct, n_bins),
        "ace": 100 * ace(conf, correct, n_bins),
        "mce": 100 * mce(conf, correct, n_bins),
    }


def feature_divergence(text_feats: torch.Tensor, m: int = 5) -> float:
    """FD: mean over classes of the mean Euclidean distance of a class's text feature to its m nearest others."""
    f = torch.nn.functional.normalize(torch.as_tensor(text_feats, dtype=torch.float64), dim=-1)
    d = torch.cdist(f, f)
    d.fill_diagonal_(float("inf"))
    m = min(m, len(f) - 1)
    return float(d.topk(m, dim=1, largest=False).values.mean())
