"""The ensemble of dichotomies built from the response (spec §3.1)."""

import numpy as np
import pytest

from methods.nonlinear_sdr.slicing import categorical_dichotomies, continuous_dichotomies, dichotomies, response_kind


def test_left_vs_right_cuts_at_quantiles():
    y = np.arange(100, dtype=float)
    probs = continuous_dichotomies(y, n_slices=10)
    assert len(probs) == 9
    # problem h puts the top (10 - h) tenths on the +1 side
    assert [int((d.labels > 0).sum()) for d in probs] == [90 - 10 * h for h in range(9)]
    assert all(set(np.unique(d.labels)) == {-1, 1} for d in probs)


def test_ties_and_slice_vs_rest():
    y = np.repeat([0.0, 1.0, 2.0], 10)  # only two distinct cut points survive
    assert len(continuous_dichotomies(y, 10)) == 2
    both = continuous_dichotomies(np.arange(50.0), 5, slice_vs_rest=True)
    assert len(both) == 4 + 5
    assert int((both[-1].labels > 0).sum()) == 10


def test_categorical_ovr_ovo_and_binary_weights():
    y = np.array(["a", "b", "c"] * 10)
    ovr, classes = categorical_dichotomies(y, "ovr")
    assert len(ovr) == 3 and list(classes) == ["a", "b", "c"]
    ovo, _ = categorical_dichotomies(y, "ovo")
    assert len(ovo) == 3 and all((d.labels == 0).sum() == 10 for d in ovo)
    binary, kind = dichotomies(np.array([0, 1] * 20), n_slices=5)
    assert kind == "categorical" and len(binary) == 4  # one problem × weights π = 0.2..0.8
    pos = [d.weight_pos for d in binary]
    assert pos == sorted(pos, reverse=True) and binary[0].sample_weights().shape == (40,)


def test_response_kind_and_constant_y():
    assert response_kind(np.array([1, 2, 3, 1])) == "categorical"
    assert response_kind(np.linspace(0, 1, 50)) == "continuous"
    assert response_kind(np.arange(100)) == "continuous"  # integer but many levels (like diabetes)
    assert response_kind(np.array(["x", "y"])) == "categorical"
    with pytest.raises(ValueError, match="single value"):
        dichotomies(np.ones(20))
