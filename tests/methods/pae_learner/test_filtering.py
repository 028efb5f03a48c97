"""The filtered-BC trajectory filter and the upper bound (spec §7 fixtures)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from methods.pae_learner.filtering import calculate_upperbound, filter_trajectories, sample_for_training


@dataclass
class T:
    task_id: str
    reward: float
    length: int
    name: str = ""


def test_spec_fixture_keeps_shortest_success_per_task():
    trajs = [
        T("A", 1, 3, "a3"),
        T("A", 1, 4, "a4"),
        T("A", 1, 9, "a9"),
        T("A", 0, 2, "a-fail"),
        T("B", 1, 8, "b8"),
        T("B", 0, 1, "b-fail"),
        T("C", 0, 5, "c-fail"),
    ]
    kept = filter_trajectories(trajs, top_p=0.2)
    # 20th percentile of [3, 4, 9] is 3.4 → only the length-3 success; B's single success is kept
    assert [k.name for k in kept] == ["a3", "b8"]


def test_ties_and_quantile():
    trajs = [T("A", 1, 2, "x"), T("A", 1, 2, "y"), T("A", 1, 5, "z")]
    assert {k.name for k in filter_trajectories(trajs)} == {"x", "y"}
    assert {k.name for k in filter_trajectories(trajs, top_p=1.0)} == {"x", "y", "z"}
    with pytest.raises(ValueError):
        filter_trajectories(trajs, top_p=1.5)


def test_upper_bound():
    assert calculate_upperbound([T("A", 0, 1), T("A", 1, 1), T("B", 0, 1)]) == 0.5
    assert calculate_upperbound([]) == 0.0


def test_sampling_without_replacement():
    kept = [T("A", 1, i, str(i)) for i in range(10)]
    s = sample_for_training(kept, 4, random.Random(0))
    assert len(s) == 4 and len({x.name for x in s}) == 4
    assert sample_for_training(kept, 50, random.Random(0)) == kept
