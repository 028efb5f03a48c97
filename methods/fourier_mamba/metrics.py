"""PSNR and SSIM on the Y channel (spec fourier_mamba §3.5, §7.6), as Restormer/MPRNet evaluate deraining.

Y = 16 + (65.481·R + 128.553·G + 24.966·B)/255 with R, G, B in [0, 1] (ITU-R BT.601, the
``rgb2ycbcr`` of the deraining code bases), so Y ∈ [16, 235] on the 0…255 scale. Images are
quantised to uint8 first (``to_uint8``), as the protocol evaluates saved PNGs.

* PSNR = 10·log10(255² / MSE(Y₁, Y₂)), +inf for identical images;
* SSIM: Gaussian window 11×11, σ = 1.5, C₁ = (0.01·255)², C₂ = (0.03·255)², mean of the map over
  the "valid" region (borders of 5 px dropped) — scikit-image's ``structural_similarity`` with
  ``gaussian_weights=True, sigma=1.5, use_sample_covariance=False, data_range=255`` computes the same.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.ndimage import correlate1d


def to_uint8(img: np.ndarray) -> np.ndarray:
    """float [0, 1] (H, W, 3) → uint8 with rounding (uint8 input is returned unchanged)."""
    if img.dtype == np.uint8:
        return img
    return (np.clip(img, 0.0, 1.0) * 255.0).round().astype(np.uint8)


def rgb_to_y(img: np.ndarray) -> np.ndarray:
    """Y channel (H, W) float64 on the 0…255 scale of an RGB image (uint8, or float in [0, 1])."""
    rgb = img.astype(np.float64) / 255.0 if img.dtype == np.uint8 else img.astype(np.float64)
    if rgb.ndim != 3 or rgb.shape[-1] != 3:
        raise ValueError(f"expected an (H, W, 3) RGB image, got {rgb.shape}")
    return 16.0 + (65.481 * rgb[..., 0] + 128.553 * rgb[..., 1] + 24.966 * rgb[..., 2])


def psnr_y(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR (dB) between the Y channels of two RGB images of one shape (uint8-quantised)."""
    ya, yb = rgb_to_y(to_uint8(a)), rgb_to_y(to_uint8(b))
    if ya.shape != yb.shape:
        raise ValueError(f"shapes differ: {ya.shape} vs {yb.shape}")
    mse = float(np.mean((ya - yb) ** 2))
    return math.inf if mse == 0.0 else 10.0 * math.log10(255.0**2 / mse)


def _gaussian_window(size: int = 11, sigma: float = 1.5) -> np.ndarray:
    r = np.arange(size) - (size - 1) / 2
    g = np.exp(-(r**2) / (2 * sigma**2))
    return g / g.sum()


def ssim_y(a: np.ndarray, b: np.ndarray) -> float:
    """SSIM between the Y channels of two RGB images of one shape (uint8-quantised), in [−1, 1]."""
    x, y = rgb_to_y(to_uint8(a)), rgb_to_y(to_uint8(b))
    if x.shape != y.shape:
        raise ValueError(f"shapes differ: {x.shape} vs {y.shape}")
    if min(x.shape) < 11:
        raise ValueError(f"SSIM needs images of at least 11×11, got {x.shape}")
    win = _gaussian_window()

    def blur(img: np.ndarray) -> np.ndarray:
        out = correlate1d(correlate1d(img, win, axis=0, mode="reflect"), win, axis=1, mode="reflect")
        return out[5:-5, 5:-5]  # the valid region

    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = blur(x), blur(y)
    vx, vy, cxy = blur(x * x) - mx * mx, blur(y * y) - my * my, blur(x * y) - mx * my
    ssim_map = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(ssim_map.mean())
