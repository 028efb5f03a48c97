"""LwF representation learning (spec §3.1 / §6) and feature extraction.

Task 1: cross-entropy. Task t ≥ 2 (LwF, no exemplars):
    L = CE(z[:, new], y − n_old) + λ_KD · KD(z[:, old], z_old),
    KD = −(1/B) Σ_b Σ_c softmax(z_old/T)_bc · log softmax(z[:, old]/T)_bc,
with z the current network's logits and z_old the frozen previous network's logits on the same
augmented batch. SGD with momentum, step decay ×0.1 at the milestones (per epoch, as torch's
``MultiStepLR``), trained by :func:`core.train.fit` on the network's device.

Shuffling and augmentation draw from a CPU ``torch.Generator`` and batches are assembled on the
CPU, then moved to the network's device: a run on the CPU is bit-identical to the loop this module
had before it used ``fit`` (tests/methods/dpcr/test_train_golden.py).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.device import autocast
from core.jobs import JobContext, null_context
from core.train import fit
from methods.dpcr.config import DPCRConfig
from methods.dpcr.model import Net

log = logging.getLogger(__name__)


def module_device(module: nn.Module) -> torch.device:
    """The device of ``module``'s first parameter (the CPU for a module without any)."""
    for p in module.parameters():
        return p.device
    return torch.device("cpu")


def multistep_rates(base: float, milestones: Sequence[int], epochs: int, gamma: float = 0.1) -> list[float]:
    """The learning rate of each epoch under torch's ``MultiStepLR``, computed as it does.

    The scheduler multiplies the current rate by ``gamma ** k`` when an epoch is a milestone
    ``k`` times (epoch 0 included, at construction), so rates after two milestones are
    ``base * 0.1 * 0.1``, not ``base * 0.01``: the same floats, bit for bit.
    """
    count = Counter(milestones)
    rates, lr = [], base
    for epoch in range(epochs):
        if epoch in count:
            lr = lr * gamma ** count[epoch]
        rates.append(lr)
    return rates


def random_shift(x: torch.Tensor, max_shift: int, generator: torch.Generator) -> torch.Tensor:
    """Shift each image by an independent random (dy, dx) in [−max_shift, max_shift]², zero fill."""
    if max_shift <= 0:
        return x
    n, _, h, w = x.shape
    p = max_shift
    padded = F.pad(x, (p, p, p, p))
    offs = torch.randint(0, 2 * p + 1, (n, 2), generator=generator)  # drawn on the generator's device (CPU)
    out = torch.empty_like(x)
    for dy in range(2 * p + 1):
        for dx in range(2 * p + 1):
            m = (offs[:, 0] == dy) & (offs[:, 1] == dx)
            if m.any():  # decided on the CPU: no device sync
                md = m.to(x.device)
                out[md] = padded[md, :, dy : dy + h, dx : dx + w]
    return out


def kd_loss(logits: torch.Tensor, old_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """−Σ softmax(z_old/T) · log softmax(z/T), summed over classes, averaged over the batch."""
    soft = torch.softmax(old_logits / temperature, dim=1)
    return -(soft * torch.log_softmax(logits / temperature, dim=1)).sum(dim=1).mean()


def train_task(
    net: Net,
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_old: int,
    cfg: DPCRConfig,
    old_net: Net | None,
    generator: torch.Generator,
    progress: JobContext | None = None,
    amp: str = "off",
) -> dict[str, float]:
    """Train ``net`` on one task's data (stream labels ``n_old..``); returns the last epoch's mean losses.

    Training runs where ``net`` is (``old_net`` must be on the same device); ``amp="bf16"`` runs the
    forward passes under bfloat16 autocast.
    """
    progress = progress or null_context()
    first = old_net is None
    epochs = cfg.epochs_first if first else cfg.epochs_inc
    lr = cfg.lr_first if first else cfg.lr_inc
    wd = cfg.wd_first if first else cfg.wd_inc
    milestones = list(cfg.milestones_first if first else cfg.milestones_inc)
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.long) - n_old
    n = len(xt)
    stats = {"ce": float("nan"), "kd": float("nan")}
    if epochs == 0 or n == 0:
        net.eval()
        return stats
    per_epoch = math.ceil(n / cfg.batch_size)
    rates = multistep_rates(lr, milestones, epochs)
    sizes: list[int] = []  # of this epoch's batches
    ces: list[torch.Tensor] = []  # this epoch's per-batch losses, kept on the device
    kds: list[torch.Tensor] = []
    perm = torch.empty(0, dtype=torch.long)

    def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal perm
        j = step % per_epoch
        if j == 0:  # a new epoch: reshuffle (the generator's draws in the old loop's order)
            perm = torch.randperm(n, generator=generator)
        idx = perm[j * cfg.batch_size : (j + 1) * cfg.batch_size]
        sizes.append(len(idx))
        return random_shift(xt[idx], cfg.augment_shift, generator), yt[idx]

    def loss_fn(model: Net, b: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        xb, yb = b
        logits = model(xb)
        ce = F.cross_entropy(logits[:, n_old:], yb)
        ces.append(ce.detach())
        if first:
            return ce
        with torch.no_grad():
            old_logits = old_net(xb)
        kd = kd_loss(logits[:, :n_old], old_logits, cfg.kd_temperature)
        kds.append(kd.detach())
        return ce + cfg.kd_lambda * kd

    def end_of_epoch(step: int) -> None:
        nonlocal stats
        if (step + 1) % per_epoch:
            return
        epoch = step // per_epoch
        stats = {
            "ce": _weighted_sum(ces, sizes) / n,
            "kd": _weighted_sum(kds, sizes) / n if not first else float("nan"),
        }
        sizes.clear()
        ces.clear()
        kds.clear()
        progress((epoch + 1) / epochs, f"epoch {epoch + 1}/{epochs} ce {stats['ce']:.3f}")

    fit(
        net,
        batch,
        loss_fn,
        steps=epochs * per_epoch,
        lr=lr,
        weight_decay=wd,
        clip=None,
        schedule=lambda step, base: rates[step // per_epoch],
        optimizer=lambda groups: torch.optim.SGD(groups, lr=lr, momentum=cfg.momentum, weight_decay=wd),
        device=module_device(net),
        amp=amp,
        sync_every=per_epoch,
        after_step=end_of_epoch,
        message="LwF step",
    )
    log.debug("trained task with %d old classes: %s", n_old, stats)
    return stats


def _weighted_sum(values: list[torch.Tensor], sizes: list[int]) -> float:
    """Σ value_i · size_i in the old loop's order (``sum += v.item() * size``), read back at once."""
    total = 0.0
    for v, k in zip(torch.stack(values).float().cpu().tolist(), sizes, strict=True):
        total += v * k
    return total


@torch.no_grad()
def extract_features(
    backbone: nn.Module, x: np.ndarray | torch.Tensor, *, batch: int = 512, amp: str = "off"
) -> np.ndarray:
    """Backbone features (eval mode, on the backbone's device) as float64 (N, d) on the CPU."""
    was_training = backbone.training
    backbone.eval()
    dev = module_device(backbone)
    xt = torch.as_tensor(x, dtype=torch.float32)
    with autocast(dev, amp):
        out = [backbone(xt[i : i + batch].to(dev)).cpu().double() for i in range(0, len(xt), batch)]
    backbone.train(was_training)
    return torch.cat(out).numpy() if out else np.zeros((0, getattr(backbone, "out_dim", 0)))


def frozen_copy(net: Net) -> Net:
    """A deep copy in eval mode with gradients off (the previous model f_{t−1})."""
    import copy

    old = copy.deepcopy(net)
    old.eval()
    for p in old.parameters():
        p.requires_grad_(False)
    return old
