"""Harness metrics on hand-made accuracy matrices (computed by hand in the comments)."""

import math

import numpy as np
import pytest

from methods.continual.metrics import (
    accuracy_matrix_row,
    backward_transfer,
    forgetting,
    mean_std,
    old_new_accuracy,
    seen_accuracy,
    summarize,
)

NAN = math.nan
# after task 1: 0.9 | after task 2: 0.7, 0.8 | after task 3: 0.5, 0.6, 1.0
A = np.array([[0.9, NAN, NAN], [0.7, 0.8, NAN], [0.5, 0.6, 1.0]])


def test_equal_task_sizes_reduce_to_row_means():
    a = seen_accuracy(A, [10, 10, 10])
    np.testing.assert_allclose(a, [0.9, 0.75, 0.7])
    s = summarize(A, [10, 10, 10])
    assert s["A_f"] == pytest.approx(0.7)
    assert s["A_bar"] == pytest.approx((0.9 + 0.75 + 0.7) / 3)
    # forgetting: task1 max(0.9, 0.7) - 0.5 = 0.4 ; task2 max(0.8) - 0.6 = 0.2 -> 0.3
    assert s["forgetting"] == pytest.approx(0.3)
    # BWT: (0.5 - 0.9 + 0.6 - 0.8) / 2 = -0.3
    assert s["bwt"] == pytest.approx(-0.3)
    # old after task 3 = (0.5 + 0.6) / 2, new = 1.0
    assert s["old_acc"] == pytest.approx(0.55)
    assert s["new_acc"] == pytest.approx(1.0)
    assert s["gap"] == pytest.approx(0.45)
    # gaps: task2 0.8 - 0.7 = 0.1, task3 0.45 -> mean 0.275
    assert s["mean_gap"] == pytest.approx(0.275)


def test_unequal_task_sizes_weight_by_samples():
    a = seen_accuracy(A, [10, 30, 60])
    # after task 2: (0.7*10 + 0.8*30) / 40 = 0.775 ; after task 3: (5 + 18 + 60) / 100 = 0.83
    np.testing.assert_allclose(a, [0.9, 0.775, 0.83])
    old, new = old_new_accuracy(A, [10, 30, 60])
    assert math.isnan(old[0])
    assert old[2] == pytest.approx((0.5 * 10 + 0.6 * 30) / 40)
    np.testing.assert_allclose(new, [0.9, 0.8, 1.0])


def test_forgetting_uses_the_best_earlier_accuracy_not_the_first():
    B = np.array([[0.5, NAN, NAN], [0.9, 0.6, NAN], [0.4, 0.6, 0.7]])
    # task1: max(0.5, 0.9) - 0.4 = 0.5 ; task2: 0.6 - 0.6 = 0 -> 0.25
    assert forgetting(B) == pytest.approx(0.25)
    assert backward_transfer(B) == pytest.approx(((0.4 - 0.5) + 0.0) / 2)


def test_single_task_has_no_forgetting_or_old_accuracy():
    s = summarize(np.array([[0.8]]), [5])
    assert s["A_f"] == s["A_bar"] == pytest.approx(0.8)
    assert math.isnan(s["forgetting"]) and math.isnan(s["old_acc"]) and math.isnan(s["gap"])


def test_accuracy_matrix_row_groups_samples_by_task():
    task_of_label = np.array([0, 0, 1, 1, 2, 2])
    y = np.array([0, 1, 2, 3, 3, 1])
    pred = np.array([0, 0, 2, 3, 2, 1])
    row = accuracy_matrix_row(y, pred, task_of_label, 3)
    # task 0 labels {0,1}: samples 0,1,5 -> correct 0,5 = 2/3 ; task 1: samples 2,3,4 -> 2/3 ; task 2 absent
    np.testing.assert_allclose(row[:2], [2 / 3, 2 / 3])
    assert math.isnan(row[2])


def test_mean_std_ignores_nan():
    m, s = mean_std([0.5, NAN, 0.7])
    assert m == pytest.approx(0.6) and s == pytest.approx(0.1)
    assert all(math.isnan(v) for v in mean_std([NAN]))
