"""LwF representation learning (spec §3.1 / §6) and feature extraction.

Task 1: cross-entropy. Task t ≥ 2 (LwF, no exemplars):
    L = CE(z[:, new], y − n_old) + λ_KD · KD(z[:, old], z_old),
    KD = −(1/B) Σ_b Σ_c softmax(z_old/T)_bc · log softmax(z[:, old]/T)_bc,
with z the current network's logits and z_old the frozen previous network's logits on the same
augmented batch. SGD with momentum, step decay ×0.1 at the milestones.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.jobs import JobContext, null_context
from methods.dpcr.config import DPCRConfig
from methods.dpcr.model import Net

log = logging.getLogger(__name__)


def random_shift(x: torch.Tensor, max_shift: int, generator: torch.Generator) -> torch.Tensor:
    """Shift each image by an independent random (dy, dx) in [−max_shift, max_shift]², zero fill."""
    if max_shift <= 0:
        return x
    n, _, h, w = x.shape
    p = max_shift
    padded = F.pad(x, (p, p, p, p))
    offs = torch.randint(0, 2 * p + 1, (n, 2), generator=generator)
    out = torch.empty_like(x)
    for dy in range(2 * p + 1):
        for dx in range(2 * p + 1):
            m = (offs[:, 0] == dy) & (offs[:, 1] == dx)
            if m.any():
                out[m] = padded[m, :, dy : dy + h, dx : dx + w]
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
) -> dict[str, float]:
    """Train ``net`` on one task's data (stream labels ``n_old..``); returns the last epoch's mean losses."""
    progress = progress or null_context()
    first = old_net is None
    epochs = cfg.epochs_first if first else cfg.epochs_inc
    lr = cfg.lr_first if first else cfg.lr_inc
    wd = cfg.wd_first if first else cfg.wd_inc
    milestones = list(cfg.milestones_first if first else cfg.milestones_inc)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=cfg.momentum, weight_decay=wd)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=milestones, gamma=0.1)
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.long) - n_old
    n = len(xt)
    stats = {"ce": float("nan"), "kd": float("nan")}
    for epoch in range(epochs):
        net.train()
        perm = torch.randperm(n, generator=generator)
        ce_sum = kd_sum = 0.0
        for start in range(0, n, cfg.batch_size):
            idx = perm[start : start + cfg.batch_size]
            xb = random_shift(xt[idx], cfg.augment_shift, generator)
            logits = net(xb)
            loss = ce = F.cross_entropy(logits[:, n_old:], yt[idx])
            if not first:
                with torch.no_grad():
                    old_logits = old_net(xb)
                kd = kd_loss(logits[:, :n_old], old_logits, cfg.kd_temperature)
                loss = ce + cfg.kd_lambda * kd
                kd_sum += kd.item() * len(idx)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ce_sum += ce.item() * len(idx)
        sched.step()
        stats = {"ce": ce_sum / n, "kd": kd_sum / n if not first else float("nan")}
        progress((epoch + 1) / epochs, f"epoch {epoch + 1}/{epochs} ce {stats['ce']:.3f}")
    net.eval()
    log.debug("trained task with %d old classes: %s", n_old, stats)
    return stats


@torch.no_grad()
def extract_features(backbone: nn.Module, x: np.ndarray | torch.Tensor, *, batch: int = 512) -> np.ndarray:
    """Backbone features (eval mode) as float64 (N, d)."""
    was_training = backbone.training
    backbone.eval()
    xt = torch.as_tensor(x, dtype=torch.float32)
    out = [backbone(xt[i : i + batch]).double() for i in range(0, len(xt), batch)]
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
