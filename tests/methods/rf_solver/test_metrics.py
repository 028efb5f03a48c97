"""Reconstruction metrics and the digit scorer."""

import math

import pytest
import torch

from methods.rf_solver.data import digits_to_images, images_to_digits, load_digits_split
from methods.rf_solver.metrics import mse, psnr, ssim
from methods.rf_solver.scorer import digit_scorer


def test_mse_psnr_known_values():
    a = -torch.ones(2, 1, 8, 8)
    b = a.clone()
    b[0] += 0.2  # 0.1 on the [0, 1] scale everywhere
    assert mse(a, b).tolist() == pytest.approx([0.01, 0.0], abs=1e-7)
    assert float(psnr(a, b)[0]) == pytest.approx(20.0, abs=1e-4)
    assert math.isinf(float(psnr(a, b, eps=0.0)[1]))


def test_ssim_identity_and_degradation():
    x = torch.rand(3, 3, 32, 32, generator=torch.Generator().manual_seed(0)) * 2 - 1
    assert ssim(x, x).tolist() == pytest.approx([1.0] * 3, abs=1e-5)
    noisy = x + 0.3 * torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    worse = x + 0.8 * torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    assert (ssim(x, worse) < ssim(x, noisy)).all() and (ssim(x, noisy) < 0.9).all()


def test_digit_image_roundtrip():
    d = load_digits_split("test")
    assert d.images.shape == (297, 1, 16, 16) and d.images.min() >= -1 and d.images.max() <= 1
    assert images_to_digits(digits_to_images(d.raw[:5])) == pytest.approx(d.raw[:5], abs=1e-4)


def test_scorer_reads_held_out_digits():
    scorer = digit_scorer()
    assert scorer.held_out_accuracy() > 0.9
    d = load_digits_split("test")
    assert scorer.accuracy(d.images[:100], d.labels[:100]) > 0.9
    assert scorer.accuracy(-torch.ones(10, 1, 16, 16), torch.arange(10)) <= 0.2
