"""Reconstruction metrics on images in [−1, 1]: MSE, PSNR and SSIM (spec §4 item 2).

Images are mapped to [0, 1] first, so PSNR uses a peak of 1. SSIM follows Wang et al.
(2004): Gaussian window (σ = 1.5, 7×7 for these tiny images), C1 = (0.01)², C2 = (0.03)²,
computed per channel on the valid region and averaged.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def _unit(x: torch.Tensor) -> torch.Tensor:
    return (x.float().clamp(-1, 1) + 1) / 2


def mse(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-image mean squared error on the [0, 1] scale, shape (B,)."""
    return (_unit(a) - _unit(b)).pow(2).flatten(1).mean(1)


def psnr(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Per-image PSNR in dB with peak 1, shape (B,)."""
    return 10 * torch.log10(1.0 / (mse(a, b) + eps))


def _gaussian_window(size: int, sigma: float) -> torch.Tensor:
    ax = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = torch.exp(-(ax**2) / (2 * sigma**2))
    g = g / g.sum()
    return g[:, None] * g[None, :]


def ssim(a: torch.Tensor, b: torch.Tensor, window: int = 7, sigma: float = 1.5) -> torch.Tensor:
    """Per-image SSIM, shape (B,)."""
    x, y = _unit(a), _unit(b)
    c = x.shape[1]
    w = _gaussian_window(window, sigma).to(x)[None, None].repeat(c, 1, 1, 1)

    def filt(z: torch.Tensor) -> torch.Tensor:
        return F.conv2d(z, w, groups=c)

    mx, my = filt(x), filt(y)
    sxx, syy, sxy = filt(x * x) - mx**2, filt(y * y) - my**2, filt(x * y) - mx * my
    c1, c2 = 0.01**2, 0.03**2
    s = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx**2 + my**2 + c1) * (sxx + syy + c2))
    return s.flatten(1).mean(1)


def summary(a: torch.Tensor, b: torch.Tensor) -> dict[str, float]:
    """Batch means of MSE, PSNR and SSIM."""
    return {"mse": float(mse(a, b).mean()), "psnr": float(psnr(a, b).mean()), "ssim": float(ssim(a, b).mean())}
