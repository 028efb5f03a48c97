"""Rectified-flow training of the tiny DiT (spec §6.2).

Loss: ‖v_θ(Z_t, t, c) − (ε − X_0)‖² with Z_t = (1−t)·X_0 + t·ε, t ~ logit-normal(0, 1)
(or uniform). AdamW, lr warm-up then cosine decay, EMA of the weights (0.999). Labels are
dropped to the null label with probability ``label_dropout`` so the model also learns the
unconditional velocity used by classifier-free guidance.

``device``/``amp`` choose where it trains (:mod:`core.device`). The batches, the label-drop mask,
t and ε are drawn on the CPU from the run's CPU generator and moved to the model's device, so a
CPU run is bit-identical to the code before devices existed and a GPU run sees the same draws.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from core.device import resolve_device
from core.train import fit, pin_threads, seed_everything
from core.train import lr_at as schedule_lr
from methods.rf_solver.config import Preset, TrainConfig
from methods.rf_solver.data import load_digits_split, photo_crops
from methods.rf_solver.model import RFDiT

log = logging.getLogger(__name__)

Batch = tuple[torch.Tensor, torch.Tensor]
Sampler = Callable[[int, torch.Generator], Batch]
Callback = Callable[[int, float], None]


@dataclass
class TrainResult:
    """The EMA model and the loss curve."""

    model: RFDiT
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def sample_t(n: int, how: str, generator: torch.Generator) -> torch.Tensor:
    """Training times: sigmoid(N(0, 1)) for "logit_normal", U(0, 1) for "uniform"."""
    if how == "logit_normal":
        return torch.sigmoid(torch.randn(n, generator=generator))
    if how == "uniform":
        return torch.rand(n, generator=generator)
    raise ValueError(f"unknown t sampling {how!r}")


def rf_loss(model: RFDiT, x0: torch.Tensor, y: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """Mean of ‖v_θ(Z_t, t, y) − (ε − X_0)‖² over the batch."""
    tb = t.view(-1, 1, 1, 1)
    zt = (1 - tb) * x0 + tb * eps
    return (model(zt, t, y) - (eps - x0)).pow(2).mean()


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up then cosine decay to 0."""
    return schedule_lr(step, lr=cfg.lr, warmup=cfg.warmup, steps=cfg.steps, min_ratio=0.0)


def data_sampler(preset: Preset) -> Sampler:
    """Minibatch sampler for the preset's training data."""
    if preset.data == "digits":
        train = load_digits_split("train")

        def digits(n: int, g: torch.Generator) -> Batch:
            idx = torch.randint(0, len(train.labels), (n,), generator=g)
            return train.images[idx], train.labels[idx]

        return digits
    if preset.data == "photo":
        return lambda n, g: photo_crops(n, preset.model.image_size, generator=g)
    raise ValueError(f"unknown data {preset.data!r}")


def train(
    cfg: TrainConfig,
    model: RFDiT,
    data: Sampler,
    *,
    callbacks: tuple[Callback, ...] = (),
    device: Any = "cpu",
    amp: str = "off",
) -> TrainResult:
    """Train ``model`` with the rectified-flow loss on ``device``; returns the EMA copy (eval mode, on ``device``).

    ``callbacks`` get ``(step, loss)`` after every step (reading the loss back each step: a GPU sync).
    """
    dev = resolve_device(device)
    with pin_threads(cfg.threads):
        g = torch.Generator().manual_seed(cfg.seed)
        seed_everything(cfg.seed)
        model.to(dev)
        ema = copy.deepcopy(model).eval().requires_grad_(False)
        null = model.cfg.null_label

        def loss_fn(m: RFDiT, batch: Batch) -> torch.Tensor:
            x0, y = batch
            drop = (torch.rand(len(y), generator=g) < cfg.label_dropout).to(y.device)
            y = torch.where(drop, torch.full_like(y, null), y)
            t = sample_t(len(y), cfg.t_sampling, g).to(x0.device)
            eps = torch.randn(x0.shape, generator=g).to(x0.device)
            return rf_loss(m, x0, y, t, eps)

        def update_ema(step: int) -> None:
            decay = min(cfg.ema, (1 + step) / (10 + step))
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters(), strict=True):
                    pe.lerp_(pm, 1 - decay)

        def report(step: int, value: float) -> None:
            for cb in callbacks:
                cb(step, value)

        start = time.perf_counter()
        losses = fit(
            model,
            lambda _step: data(cfg.batch_size, g),
            loss_fn,
            steps=cfg.steps,
            lr=cfg.lr,
            warmup=cfg.warmup,
            weight_decay=cfg.weight_decay,
            clip=1.0,
            device=dev,
            amp=amp,
            on_step=report if callbacks else None,
            after_step=update_ema,
        )
    return TrainResult(model=ema, losses=losses, seconds=time.perf_counter() - start)
