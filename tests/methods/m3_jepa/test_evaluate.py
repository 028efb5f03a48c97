"""Retrieval metrics by hand: exact-pair recall with ties, class-level R@1, the caption-limited oracle."""

import numpy as np
import torch

from methods.m3_jepa.data import Split, oracle_r1, oracle_recall
from methods.m3_jepa.evaluate import class_r1, recall_at


def test_recall_with_strict_ranks_and_expected_ties():
    sim = torch.tensor(
        [
            [0.9, 0.1, 0.2],  # rank 1
            [0.5, 0.4, 0.3],  # rank 2
            [0.7, 0.7, 0.7],  # three-way tie: P(rank 1) = 1/3, P(rank ≤ 2) = 2/3
        ]
    )
    r = recall_at(sim, (1, 2, 3))
    assert abs(r[1] - (1 + 0 + 1 / 3) / 3) < 1e-9
    assert abs(r[2] - (1 + 1 + 2 / 3) / 3) < 1e-9
    assert r[3] == 1.0


def test_random_scores_give_chance_recall():
    g = torch.Generator().manual_seed(0)
    sim = torch.rand(400, 400, generator=g)
    r = recall_at(sim, (1, 10))
    assert abs(r[1] - 1 / 400) < 0.01 and abs(r[10] - 10 / 400) < 0.02


def test_class_r1():
    sim = torch.tensor([[0.1, 0.9, 0.0], [0.2, 0.1, 0.3], [0.0, 0.0, 1.0]])
    labels = torch.tensor([0, 0, 1])
    assert class_r1(sim, labels, labels) == 2 / 3


def test_oracle_from_groups():
    # groups (class, ink, slant): {a, a, b, c, c, c} → 1/2, 1/2, 1, 1/3, 1/3, 1/3
    labels = np.array([0, 0, 1, 2, 2, 2])
    part = Split(np.zeros((6, 8, 8)), labels, np.zeros(6, int), np.zeros(6, int), ("",) * 6, np.arange(6))
    assert abs(oracle_r1(part) - (0.5 + 0.5 + 1 + 1 / 3 * 3) / 6) < 1e-12
    assert oracle_recall(part, 2) == (1 + 1 + 1 + 2 / 3 * 3) / 6
