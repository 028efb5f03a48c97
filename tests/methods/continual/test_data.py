"""Task streams: seeded class order, label remapping, per-class subsampling."""

import numpy as np
import pytest

from methods.continual.data import LabelledSplit, load_digits_split, make_stream, seeded_class_order


@pytest.fixture(scope="module")
def digits():
    return load_digits_split()


def test_digits_split_is_the_spec_split(digits):
    assert digits.x_train.shape[1:] == (1, 8, 8) and digits.x_train.dtype == np.float32
    assert len(digits.y_train) + len(digits.y_test) == 1797
    assert len(digits.y_test) == 540  # 30 %, stratified
    assert 0.0 <= digits.x_train.min() and digits.x_train.max() <= 1.0
    test_counts = np.bincount(digits.y_test, minlength=10)
    all_counts = test_counts + np.bincount(digits.y_train, minlength=10)
    assert np.abs(test_counts - 0.3 * all_counts).max() <= 1  # stratified


def test_stream_follows_the_seeded_class_order(digits):
    stream = make_stream(digits, classes_per_task=2, seed=1993)
    assert stream.class_order == tuple(np.random.RandomState(1993).permutation(10))
    assert len(stream) == 5
    for t, task in enumerate(stream):
        assert task.classes == (2 * t, 2 * t + 1)
        assert set(np.unique(task.y_train)) == set(task.classes)
        for label in task.classes:  # the stream label maps back to the original digit
            orig = stream.original_class(label)
            idx = task.y_test == label
            np.testing.assert_array_equal(task.x_test[idx], digits.x_test[digits.y_test == orig])
    x, y = stream.test_upto(1)
    assert set(np.unique(y)) == {0, 1, 2, 3} and len(x) == len(y)
    assert sum(len(t.y_test) for t in stream) == len(digits.y_test)


def test_seeds_change_the_order_and_subsampling_caps_training_only(digits):
    assert seeded_class_order(10, 1993) != seeded_class_order(10, 1994)
    s = make_stream(digits, classes_per_task=2, seed=1994, samples_per_class=32, n_tasks=3)
    assert len(s) == 3
    for task in s:
        assert np.bincount(task.y_train - task.classes[0]).tolist() == [32, 32]
        assert len(task.y_test) > 64  # the test sets stay whole
    again = make_stream(digits, classes_per_task=2, seed=1994, samples_per_class=32, n_tasks=3)
    np.testing.assert_array_equal(s.tasks[0].x_train, again.tasks[0].x_train)


def test_bad_streams_are_rejected():
    split = LabelledSplit(np.zeros((6, 1)), np.array([0, 1, 2, 0, 1, 2]), np.zeros((3, 1)), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="cannot be cut"):
        make_stream(split, classes_per_task=2)
    with pytest.raises(ValueError, match="permutation"):
        make_stream(split, classes_per_task=1, class_order=(0, 0, 1))
    with pytest.raises(ValueError, match="n_tasks"):
        make_stream(split, classes_per_task=1, n_tasks=4)
