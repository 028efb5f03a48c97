"""Evaluation: PSNR/SSIM(Y) of rainy input and derained output against the clean image (spec §4, §7.5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.stats import normal_half_width
from methods.fourier_mamba.data import RainSet, sample_crops
from methods.fourier_mamba.metrics import psnr_y, ssim_y
from methods.fourier_mamba.model import FourierMambaNet, derain_image


@dataclass
class PairScores:
    name: str
    psnr_in: float
    ssim_in: float
    psnr_out: float
    ssim_out: float


def heldout_crops(rs: RainSet, n: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` fixed crops (no flips) from the held-out right quarter of every image."""
    return sample_crops(rs, n, size, "heldout", np.random.default_rng([seed, 2]), flips=False)


def to_hwc(x: np.ndarray | torch.Tensor) -> np.ndarray:
    arr = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x
    return np.ascontiguousarray(arr.transpose(1, 2, 0))


def score_pair(name: str, rainy: np.ndarray, clean: np.ndarray, out: np.ndarray) -> PairScores:
    """Scores of (H, W, 3) images in [0, 1]."""
    return PairScores(name, psnr_y(rainy, clean), ssim_y(rainy, clean), psnr_y(out, clean), ssim_y(out, clean))


def derain_np(model: FourierMambaNet, rainy: np.ndarray) -> np.ndarray:
    """(H, W, 3) float [0, 1] → derained (H, W, 3)."""
    model.eval()
    x = torch.from_numpy(np.ascontiguousarray(rainy.transpose(2, 0, 1))).float()
    return to_hwc(derain_image(model, x).float())


def evaluate_crops(model: FourierMambaNet, xs: np.ndarray, ys: np.ndarray, batch: int = 16) -> list[PairScores]:
    model.eval()
    outs = []
    with torch.no_grad():
        for i in range(0, len(xs), batch):
            outs.append(derain_image(model, torch.from_numpy(xs[i : i + batch])).float().numpy())
    out = np.concatenate(outs)
    return [score_pair(f"crop{i}", to_hwc(xs[i]), to_hwc(ys[i]), to_hwc(out[i])) for i in range(len(xs))]


def summarize(scores: list[PairScores]) -> dict[str, float]:
    """Means, the gain and a 95 % bootstrap-free normal CI half-width of the PSNR gain."""
    gain = np.array([s.psnr_out - s.psnr_in for s in scores])
    return {
        "psnr_in": float(np.mean([s.psnr_in for s in scores])),
        "psnr_out": float(np.mean([s.psnr_out for s in scores])),
        "ssim_in": float(np.mean([s.ssim_in for s in scores])),
        "ssim_out": float(np.mean([s.ssim_out for s in scores])),
        "psnr_gain": float(gain.mean()),
        "psnr_gain_ci95": normal_half_width(gain),
        "n": len(scores),
    }
