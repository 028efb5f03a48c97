"""Training FourierMamba on synthetic rain over real clean photos (spec fourier_mamba §6), via :func:`core.train.fit`."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from core.device import resolve_device
from core.train import fit, pin_threads, seed_everything
from methods.fourier_mamba.config import ModelConfig, TrainConfig
from methods.fourier_mamba.data import RainSet, clean_backgrounds, make_rain_set, sample_crops
from methods.fourier_mamba.losses import derain_loss
from methods.fourier_mamba.model import FourierMambaNet

log = logging.getLogger(__name__)


@dataclass
class TrainResult:
    model: FourierMambaNet
    losses: list[float]
    seconds: float
    data: RainSet = field(repr=False)


def training_set(cfg: TrainConfig, data_dir: Path | None) -> RainSet:
    """The seeded rainy/clean full images the crops are cut from."""
    backgrounds = clean_backgrounds(data_dir, rain100l_targets=cfg.rain100l_targets)
    return make_rain_set(backgrounds, variants=cfg.variants, seed=cfg.seed, kind=cfg.rain)


def train_model(
    model_cfg: ModelConfig,
    cfg: TrainConfig,
    data_dir: Path | None,
    *,
    progress=None,
    rain_set: RainSet | None = None,
    device: Any = None,
) -> TrainResult:
    """Train a fresh network for ``cfg.steps`` AdamW steps on random crops (flips) of the rain set.

    It trains on ``cfg.device`` (``auto``: CUDA when present) under ``cfg.amp``; ``device`` (any torch
    device, e.g. the tests' ``lazy``) overrides it. Crops are cut on the CPU and moved as they come.
    The returned model is on the CPU.
    """
    import time

    dev = resolve_device(cfg.device if device is None else device)
    seed_everything(cfg.seed)
    rs = rain_set if rain_set is not None else training_set(cfg, data_dir)
    rng = np.random.default_rng([cfg.seed, 1])
    model = FourierMambaNet(model_cfg).to(dev)  # on CUDA the scan runs as the Triton kernel (scan_impl auto)

    def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = sample_crops(rs, cfg.batch_size, cfg.crop, "train", rng)
        return torch.from_numpy(x), torch.from_numpy(y)

    def loss_fn(net: FourierMambaNet, b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return derain_loss(net(b[0]), b[1], cfg.freq_weight)

    t0 = time.perf_counter()
    with pin_threads(cfg.threads):
        losses = fit(
            model,
            batch,
            loss_fn,
            steps=cfg.steps,
            lr=cfg.lr,
            warmup=cfg.warmup,
            weight_decay=cfg.weight_decay,
            min_lr_ratio=cfg.min_lr_ratio,
            device=dev,
            amp=cfg.amp,
            progress=progress,
            message=f"train ({model_cfg.scan_order})",
            log_every=50,
        )
    return TrainResult(model.cpu(), losses, time.perf_counter() - t0, rs)
