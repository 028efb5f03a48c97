"""Long-short misalignment (spec §3.2) and the two-window regularizer (spec §3.3), over logits.

Everything is computed from ``log_softmax`` in fp32: ``p·(log p − log q)`` with log-probabilities from
logsumexp, never ``log(softmax)``, so no NaN when probabilities underflow.
"""

from __future__ import annotations

import random
from typing import Literal

import torch
from torch.nn import functional as F

from core.device import autocast

Divergence = Literal["sce", "skl", "kl", "js"]


def _logp(logits: torch.Tensor) -> torch.Tensor:
    return F.log_softmax(logits if logits.dtype == torch.float64 else logits.float(), dim=-1)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    lp = _logp(logits)
    return -(lp.exp() * lp).sum(-1)


def sce(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Symmetric cross-entropy ``−Σ p log q − Σ q log p`` (sum of both directions), per row."""
    lp, lq = _logp(a), _logp(b)
    return -(lp.exp() * lq).sum(-1) - (lq.exp() * lp).sum(-1)


def skl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Symmetric KL ``KL(p‖q) + KL(q‖p)`` — the pure misalignment part of SCE; zero iff p = q."""
    lp, lq = _logp(a), _logp(b)
    return (lp.exp() * (lp - lq)).sum(-1) + (lq.exp() * (lq - lp)).sum(-1)


def kl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    lp, lq = _logp(a), _logp(b)
    return (lp.exp() * (lp - lq)).sum(-1)


def js(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    lp, lq = _logp(a), _logp(b)
    lm = torch.logsumexp(torch.stack((lp, lq)), dim=0) - torch.log(torch.tensor(2.0))
    return 0.5 * (lp.exp() * (lp - lm)).sum(-1) + 0.5 * (lq.exp() * (lq - lm)).sum(-1)


DIVERGENCES = {"sce": sce, "skl": skl, "kl": kl, "js": js}


def sample_l_extra(l_train: int, rng: random.Random) -> int:
    """``l_extra ~ U{1..l_train/2}`` (the paper's chosen range)."""
    return rng.randint(1, max(1, l_train // 2))


def split_window(window: torch.Tensor, l_train: int, l_extra: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``s1 = w[:l_train]``, ``s2 = w[l_extra : l_extra + l_train]`` of a window of ``l_train + l_extra (+1)``."""
    return window[:, :l_train], window[:, l_extra : l_extra + l_train]


def two_window_loss(
    model: torch.nn.Module,
    window: torch.Tensor,
    *,
    l_train: int,
    l_extra: int,
    alpha: float = 0.1,
    divergence: Divergence = "sce",
    positions: Literal["overlap", "last"] = "overlap",
    train_loss_on: Literal["both", "first"] = "both",
    stopgrad: Literal["none", "long", "short"] = "none",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``L_train + α·L_misalign`` from the two forward passes of spec §3.3; returns (total, ce, misalign).

    ``window`` is [B, l_train + l_extra + 1] (one more token for the targets of s2). The overlap is the
    absolute positions ``t ∈ [l_extra, l_train)``: s1's prediction after t has seen t+1 tokens, s2's has
    seen t+1−l_extra. With ``alpha == 0`` only the CE of s1 (and s2 if ``train_loss_on="both"``) is used.
    """
    s1, s2 = window[:, :l_train], window[:, l_extra : l_extra + l_train]
    y1, y2 = window[:, 1 : l_train + 1], window[:, l_extra + 1 : l_extra + l_train + 1]
    z1 = model(s1)
    ce1 = F.cross_entropy(z1.flatten(0, 1).float(), y1.flatten())
    need_second = train_loss_on == "both" or alpha != 0.0
    if not need_second:
        zero = z1.new_zeros(())
        return ce1, ce1, zero
    z2 = model(s2)
    ce = 0.5 * (ce1 + F.cross_entropy(z2.flatten(0, 1).float(), y2.flatten())) if train_loss_on == "both" else ce1
    long_part = z1[:, l_extra:l_train]  # absolute t in [l_extra, l_train): more context
    short_part = z2[:, : l_train - l_extra]  # same absolute tokens, l_extra fewer tokens of context
    if positions == "last":
        long_part, short_part = long_part[:, -1:], short_part[:, -1:]
    if stopgrad == "long":
        long_part = long_part.detach()
    elif stopgrad == "short":
        short_part = short_part.detach()
    mis = DIVERGENCES[divergence](long_part, short_part).mean()
    if alpha == 0.0:
        return ce, ce, mis.detach()
    return ce + alpha * mis, ce, mis


@torch.no_grad()
def misalignment_metric(
    model: torch.nn.Module,
    ids: torch.Tensor,
    *,
    l_train: int,
    n_samples: int = 128,
    batch: int = 16,
    seed: int = 0,
    amp: str = "off",
) -> dict[str, float]:
    """``E[SCE(g(x[−l1:]), g(x[−l2:]))]`` with l1, l2 ~ U[l_train/2, l_train] (spec §3.2), plus SKL.

    ``ids`` is a 1-D token stream; each sample picks an end position and compares the next-token
    distributions after the two suffixes ending there. l1, l2 are shared within a batch of ``batch``.
    Runs on the model's device (the suffixes are cut on the CPU and moved there).
    """
    rng = random.Random(seed)
    model.eval()
    dev = next(model.parameters()).device
    tot_sce = tot_skl = 0.0
    n = 0
    while n < n_samples:
        bs = min(batch, n_samples - n)
        l1, l2 = rng.randint(l_train // 2, l_train), rng.randint(l_train // 2, l_train)
        ends = [rng.randint(l_train, len(ids)) for _ in range(bs)]
        x1 = torch.stack([ids[e - l1 : e] for e in ends]).to(dev)
        x2 = torch.stack([ids[e - l2 : e] for e in ends]).to(dev)
        with autocast(dev, amp):
            a, b = model(x1)[:, -1], model(x2)[:, -1]
        tot_sce += float(sce(a, b).sum())
        tot_skl += float(skl(a, b).sum())
        n += bs
    return {"sce": tot_sce / n, "skl": tot_skl / n}
