"""Pixel + frequency loss (spec fourier_mamba §3.5 [R]): L1(ŷ, y) + λ·L1(|FFT(ŷ)|, |FFT(y)|), λ = 0.1 by default."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def amplitude(x: torch.Tensor) -> torch.Tensor:
    """|rfft2| (orthonormal) of a (…, H, W) batch."""
    return torch.fft.rfft2(x.float(), norm="ortho").abs()


def derain_loss(pred: torch.Tensor, target: torch.Tensor, freq_weight: float = 0.1) -> torch.Tensor:
    """L1 pixel loss plus ``freq_weight`` × L1 between FFT amplitudes."""
    loss = F.l1_loss(pred, target)
    if freq_weight:
        loss = loss + freq_weight * F.l1_loss(amplitude(pred), amplitude(target))
    return loss
