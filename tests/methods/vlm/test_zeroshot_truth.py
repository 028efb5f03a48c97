"""vlm.zeroshot's report states a dataset image's true class beside the prediction (issue #47)."""

import torch

from methods.vlm.report import zero_shot_report


def test_the_report_names_the_true_label_and_whether_the_top_class_is_it():
    image = torch.zeros(3, 8, 8)
    wrong = zero_shot_report(image, ["cat", "dog", "cow"], [0.2, 0.7, 0.1], "a photo of a {}.", [], truth="cat")
    assert "True label: **cat** — wrong (the true class is ranked 2), p(true) = 0.200." in wrong.summary
    assert wrong.metrics["truth"] == "cat" and wrong.metrics["correct"] is False and wrong.data["truth"] == "cat"
    assert wrong.tables[0].columns == ["class", "probability", "true label"]
    assert [r[2] for r in wrong.tables[0].rows] == ["", "✓", ""]
    right = zero_shot_report(image, ["cat", "dog"], [0.9, 0.1], "{}", [], truth="cat")
    assert "— correct" in right.summary and right.metrics["correct"] is True
    upload = zero_shot_report(image, ["cat", "dog"], [0.9, 0.1], "{}", [])
    assert "True label" not in upload.summary and "truth" not in upload.metrics
