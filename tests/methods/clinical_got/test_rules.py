"""Spec §7 unit checks: grades, lesion %, score rules, set and outcome metrics, caption, parsing."""

from __future__ import annotations

import numpy as np
import pytest

from methods.clinical_got import rules
from methods.clinical_got.atlas import PRIMARY, roi_table
from methods.clinical_got.metrics import outcome_metrics, rouge, set_metrics
from methods.clinical_got.parsing import parse_grading, parse_outcome, parse_rois, parse_score


@pytest.mark.parametrize(
    ("p", "level"), [(0.0, 1), (0.01, 1), (0.0100001, 2), (0.05, 2), (0.0500001, 3), (0.5, 3), (0.51, 4)]
)
def test_grade_thresholds(p, level):
    assert rules.grade(p) == level


def test_lesion_fraction_on_a_hand_built_volume():
    adc = np.array([[1000, 1000, 0, 0], [1000, 1000, 1000, 0], [1000, 1000, 1000, 1000], [0, 0, 0, 0]], float)
    z = np.zeros((4, 4))
    z[0, 0] = z[1, 2] = -2.5  # two lesion voxels inside the brain
    z[0, 2] = -5.0  # outside the brain (ADC = 0): not counted
    z[2, 0] = -2.0  # not below -2
    assert rules.lesion_fraction(adc[..., None], z[..., None]) == pytest.approx(2 / 9)


def test_math_score_rules():
    assert rules.math_score({}) == 0
    assert rules.math_score({81: 0.6, 85: 0.3}) == 1  # white matter only
    assert rules.math_score({23: 0.4}) == 2  # BGT 40 %
    assert rules.math_score({23: 0.8}) == 3  # BGT 80 %
    assert rules.math_score({93: 0.9}) == 3  # PLIC > 75 %
    assert rules.math_score({120: 0.5, 81: 0.5}) == 2  # GM and WM below 75 %
    gm_wm = {r: 0.9 for r in (*rules.GM, *rules.WM)}
    assert rules.math_score(gm_wm) == 3
    assert rules.math_score({38: 0.9, 71: 0.9}) == 0  # cerebellum/vermis do not enter the score
    assert rules.math_score({81: 0.1}) == 0  # below the ROI threshold: not an injured region


@pytest.mark.parametrize(
    ("injured", "p", "score"),
    [
        ([], 0.0, 0),
        ([], 0.002, 1),  # minimal lesion, no injured region
        ([120], 0.03, 1),  # cortex only, no BGT/ALIC/PLIC/WS
        ([23], 0.01, 2),  # BGT
        ([92], 0.01, 2),  # ALIC
        ([94], 0.01, 2),  # PLIC
        ([85], 0.02, 2),  # watershed (parietal WM)
        ([120, 23], 0.6, 3),  # hemispheric devastation
    ],
)
def test_clinic_score_table(injured, p, score):
    assert rules.clinic_score(injured, p) == score


def test_set_metrics_micro_average_like_the_reference():
    m = set_metrics([{1}, {3, 4}], [{1, 2}, {3}])
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)
    assert m["jaccard"] == pytest.approx(2 / 4)
    assert set_metrics([None], [{5}])["recall"] == 0.0  # an unparsable answer is an empty prediction


def test_outcome_metric_counts_missing_answers_and_balances_classes():
    m = outcome_metrics([1, None, 0, 0, None], [1, 1, 0, 1, 0])
    assert m["accuracy"] == pytest.approx(2 / 5)  # missing answers stay in the denominator
    assert m["missing"] == 2
    assert m["recall_1"] == pytest.approx(1 / 3)
    assert m["recall_0"] == pytest.approx(1 / 2)
    assert m["balanced_accuracy"] == pytest.approx((1 / 3 + 1 / 2) / 2)


def test_caption_template_and_rouge():
    assert rules.caption("c7", 0.0, [23], [], 2) == "The c7 MRI shows no brain volume injured."
    text = rules.caption("c7", 0.0312, [23, 71], rules.uncommon_rois([23, 71]), 2)
    assert "3.12% of the brain volume" in text and "Left Basal Ganglia, vermis" in text
    assert "For uncommon areas, vermis are not typical" in text and text.endswith("Score 2.")
    r = rouge([text], [text])
    assert r["rouge1_f"] == r["rouge2_f"] == r["rougeL_f"] == pytest.approx(1.0)
    assert rouge(["something else entirely"], [text])["rougeL_f"] < 0.2


def test_uncommon_is_injured_minus_primary():
    assert rules.uncommon_rois([23, 71, 81, 47]) == [71, 47]
    assert set(PRIMARY) <= set(roi_table())


def test_parsers():
    assert parse_grading("[ans]: level2, 0.0312") == (2, pytest.approx(0.0312))
    assert parse_grading("[ans]:level3,12.5%") == (3, pytest.approx(0.125))
    assert parse_grading("I think level4") == (4, None)
    assert parse_grading("no idea") is None
    assert parse_rois("[ans]: 23, 94, 999, 23") == [23, 94]
    assert parse_rois("[ans]: none") == []
    assert parse_rois("23, 94") is None
    assert parse_score("[ans]: Score 3.") == 3 and parse_score("score: high") is None
    assert parse_outcome("[ans]: 1") == 1 and parse_outcome("[ans]: 0") == 0 and parse_outcome("adverse") is None
