"""The patch mask: foreground patches from boxes, the two-stage selection, detectors, baselines."""

from __future__ import annotations

import numpy as np
import pytest

from methods.double_filter import ipf


def test_foreground_patches_follow_box_coverage():
    # 32×32 image, 8×8 patches (4×4 grid): a box covering patch (0,0) fully and half of patch (0,1)
    fg = ipf.foreground_patches(np.array([[0, 0, 12, 8]]), 32, 8, tau=0.5)
    assert fg.shape == (16,)
    assert fg[0] and fg[1] and not fg[2] and fg.sum() == 2  # patch 1 is covered exactly 50 % → foreground
    assert ipf.foreground_patches(np.array([[0, 0, 12, 8]]), 32, 8, tau=0.6).sum() == 1
    assert ipf.foreground_patches(np.zeros((0, 4)), 32, 8).sum() == 0  # no box ⇒ all background


@pytest.mark.parametrize("rho", [0.1, 0.25, 0.5, 0.6, 0.8, 1.0])
def test_select_returns_round_rho_n_sorted_unique_with_background(rho):
    rng = np.random.default_rng(0)
    for _ in range(20):
        imp = rng.random(16)
        fg = rng.random(16) < rng.uniform(0.1, 0.9)
        keep = ipf.select(imp, fg, rho)
        k = max(1, round(rho * 16))
        assert len(keep) == k and len(set(keep)) == k and (np.diff(keep) > 0).all()
        assert keep.min() >= 0 and keep.max() < 16
        if (~fg).any() and k >= 2:
            assert (~fg[keep]).any(), "at least one background patch is kept"


def test_select_ranks_by_importance_within_each_side():
    imp = np.arange(16, dtype=float)  # later patches more important
    fg = np.zeros(16, dtype=bool)
    fg[:10] = True  # 10 foreground, 6 background
    keep = ipf.select(imp, fg, 0.5, r_fg=0.8)  # k = 8: k_fg = min(8, 7) = 7, k_bg = 1
    assert list(keep) == [3, 4, 5, 6, 7, 8, 9, 15]
    only = ipf.select(imp, fg, 0.5, fg_only=True)  # foreground-first: 8 best foreground patches, no background
    assert list(only) == [2, 3, 4, 5, 6, 7, 8, 9]
    none = ipf.select(imp, np.zeros(16, bool), 0.25)  # no boxes: attention-only fallback
    assert list(none) == [12, 13, 14, 15]


def test_components_detector_finds_the_rendered_object():
    from methods.vlm.render import render, sample_scene

    scene = sample_scene(np.random.default_rng(5), count=1)
    img, gt = render(scene)
    boxes = ipf.ComponentsDetector().detect(img.transpose(2, 0, 1))
    assert len(boxes) >= 1
    x0, y0, x1, y1 = gt[0]
    bx0, by0, bx1, by1 = boxes[np.argmax((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))]
    inter = max(0, min(x1, bx1) - max(x0, bx0)) * max(0, min(y1, by1) - max(y0, by0))
    union = (x1 - x0) * (y1 - y0) + (bx1 - bx0) * (by1 - by0) - inter
    assert inter / union > 0.6
    assert ipf.ComponentsDetector().flops_per_image > 0 and ipf.BoxesDetector([]).flops_per_image == 0


def test_random_keep_is_seeded_and_sorted():
    a, b = ipf.random_keep(5, 16, 0.5, seed=1), ipf.random_keep(5, 16, 0.5, seed=1)
    assert a.shape == (5, 8) and (a == b).all() and (a.diff(dim=1) > 0).all()
    with pytest.raises(ValueError):
        ipf.make_detector("yolo")
