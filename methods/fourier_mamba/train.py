"""Training FourierMamba on synthetic rain over real clean photos (spec fourier_mamba §6), via :func:`core.train.fit`."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

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
) -> TrainResult:
    """Train a fresh network for ``cfg.steps`` AdamW steps on random crops (flips) of the rain set."""
    import time

    seed_everything(cfg.seed)
    rs = rain_set if rain_set is not None else training_set(cfg, data_dir)
    rng = np.random.default_rng([cfg.seed, 1])
    device = torch.device(
        "cuda" if cfg.device == "auto" and torch.cuda.is_available() else cfg.device.replace("auto", "cpu")
    )
    model = FourierMambaNet(model_cfg).to(device)  # on CUDA the scan runs as the Triton kernel (scan_impl auto)

    def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = sample_crops(rs, cfg.batch_size, cfg.crop, "train", rng)
        return torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)

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
            progress=progress,
            message=f"train ({model_cfg.scan_order})",
            log_every=50,
        )
    return TrainResult(model.cpu(), losses, time.perf_counter() - t0, rs)
