"""PSNR/SSIM on Y (spec §7.6): the formula, inf for identical images, and scikit-image agreement to 1e-6."""

import math

import numpy as np
import pytest
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from methods.fourier_mamba.metrics import psnr_y, rgb_to_y, ssim_y, to_uint8


def test_y_formula():
    img = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]])
    np.testing.assert_allclose(rgb_to_y(img)[0], [16 + 65.481, 16 + 128.553, 16 + 24.966, 235.0, 16.0])
    assert rgb_to_y(np.full((1, 1, 3), 255, np.uint8))[0, 0] == pytest.approx(235.0)


def test_identical_images_psnr_inf_ssim_one():
    img = np.random.default_rng(0).random((24, 30, 3))
    assert psnr_y(img, img) == math.inf
    assert ssim_y(img, img) == pytest.approx(1.0)


@pytest.mark.parametrize("noise", [0.01, 0.1])
def test_matches_scikit_image(noise):
    rng = np.random.default_rng(1)
    a = rng.random((48, 40, 3))
    b = np.clip(a + rng.normal(0, noise, a.shape), 0, 1)
    ya, yb = rgb_to_y(to_uint8(a)), rgb_to_y(to_uint8(b))
    assert abs(psnr_y(a, b) - peak_signal_noise_ratio(ya, yb, data_range=255)) < 1e-6
    ref = structural_similarity(ya, yb, data_range=255, gaussian_weights=True, sigma=1.5, use_sample_covariance=False)
    assert abs(ssim_y(a, b) - ref) < 1e-6


def test_quantised_before_scoring_and_rejects_bad_shapes():
    a = np.full((16, 16, 3), 0.5)
    assert psnr_y(a, a + 1e-4) == math.inf  # same uint8 value
    with pytest.raises(ValueError):
        psnr_y(a, a[:8])
    with pytest.raises(ValueError):
        ssim_y(a[:8, :8], a[:8, :8])
