"""ECE / MCE / ACE from their definitions, pinned on hand-computed cases (spec dor.md §7.1)."""

import numpy as np
import pytest
import torch

from methods.dor.calibration import (
    ace,
    bin_index,
    calibration_summary,
    confidences,
    ece,
    feature_divergence,
    mce,
    reliability,
)


def test_all_correct_with_confidence_one_is_perfectly_calibrated():
    assert ece([1.0, 1.0, 1.0], [1, 1, 1]) == 0.0
    assert mce([1.0, 1.0], [1, 1]) == 0.0


def test_hand_computed_four_samples():
    conf = [0.95, 0.95, 0.65, 0.65]
    correct = [1, 0, 1, 1]
    # bin [0.9, 1]: acc 0.5, conf 0.95, weight 0.5 -> 0.225; bin [0.6, 0.7): acc 1, conf 0.65 -> 0.175
    assert ece(conf, correct) == pytest.approx(0.40)
    assert mce(conf, correct) == pytest.approx(0.45)


def test_confidence_one_lands_in_the_last_bin_and_counts():
    assert bin_index(np.array([1.0, 0.999, 0.9]))[0] == 9
    b = reliability([1.0, 0.95], [0, 1])
    assert b.count[9] == 2 and b.count.sum() == 2
    # last bin: acc 0.5, conf 0.975 -> ECE 0.475; the sibling repo's 11th index would drop the 1.0 sample
    # from the bin statistics (acc 1, conf 0.95 over weight 0.5 -> 0.025)
    assert ece([1.0, 0.95], [0, 1]) == pytest.approx(0.475)


def test_one_wrong_sample_at_confidence_one():
    assert ece([1.0], [0]) == pytest.approx(1.0)
    assert mce([1.0], [0]) == pytest.approx(1.0)


def test_order_invariance_and_mce_bounds_ece():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.05, 0.999, 500)
    correct = (rng.uniform(size=500) < conf**1.5).astype(float)
    perm = rng.permutation(500)
    assert ece(conf, correct) == pytest.approx(ece(conf[perm], correct[perm]))
    assert ace(conf, correct) == pytest.approx(ace(conf[perm], correct[perm]))
    assert mce(conf, correct) >= ece(conf, correct)


def test_ace_equal_mass_bins_by_hand():
    conf = [0.15, 0.25, 0.55, 0.85]
    correct = [0, 1, 1, 1]
    # two equal-mass bins: {0.15, 0.25}: acc 0.5 conf 0.2 -> 0.3*0.5; {0.55, 0.85}: acc 1 conf 0.7 -> 0.3*0.5
    assert ace(conf, correct, n_bins=2) == pytest.approx(0.30)
    # equal-width ECE with 10 bins: every sample alone: |0-.15|+|1-.25|+|1-.55|+|1-.85| over 4
    assert ece(conf, correct) == pytest.approx((0.15 + 0.75 + 0.45 + 0.15) / 4)


def test_confidences_come_from_a_softmax():
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0]])
    conf, correct = confidences(logits, [0, 0])
    assert conf == pytest.approx([1 / (1 + np.exp(-2)), 1 / (1 + np.exp(-1))])
    assert list(correct) == [1.0, 0.0]
    s = calibration_summary(logits, [0, 0])
    assert s["acc"] == pytest.approx(50.0) and 0 <= s["ece"] <= 100


def test_invalid_inputs_are_refused():
    with pytest.raises(ValueError):
        ece([], [])
    with pytest.raises(ValueError):
        ece([1.2], [1])
    with pytest.raises(ValueError):
        ece([0.5, 0.5], [1])


def test_feature_divergence():
    square = torch.tensor([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
    assert feature_divergence(square, m=2) == pytest.approx(np.sqrt(2))
    tight = torch.tensor([[1.0, 0.01, 0], [1.0, 0, 0.01], [1.0, 0, 0]])
    assert feature_divergence(tight, m=2) < 0.05
