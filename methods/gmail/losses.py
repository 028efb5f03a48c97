"""Stage-1 and stage-2 losses (spec gmail.md §3.2, §3.3).

* :func:`align_loss` — Eq. 1, InfoNCE with generated anchors and the batch's real candidates:
  L_align = −(1/|B|) Σ log softmax_j(sim(f_g(x_g^i), f_r(x_r^j)) / τ)_i, cosine similarity, τ = 0.07.
  The real embeddings are targets: callers pass them detached (f_r is frozen).
* :func:`clip_loss` — CLIP's symmetric image–text InfoNCE at the backbone's logit scale.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def align_loss(gen: torch.Tensor, real: torch.Tensor, tau: float = 0.07) -> torch.Tensor:
    """L_align for row-paired embeddings (n, d); inputs are L2-normalised here (cosine similarity)."""
    if gen.shape != real.shape or gen.ndim != 2:
        raise ValueError(f"gen and real must be paired (n, d) matrices, got {tuple(gen.shape)} and {tuple(real.shape)}")
    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    logits = F.normalize(gen, dim=-1) @ F.normalize(real, dim=-1).t() / tau
    return F.cross_entropy(logits, torch.arange(len(gen), device=gen.device))


def clip_loss(image: torch.Tensor, text: torch.Tensor, scale: float) -> torch.Tensor:
    """(CE(s·I·Tᵀ, diag) + CE(s·T·Iᵀ, diag)) / 2 over normalised, row-paired features."""
    logits = scale * image @ text.t()
    target = torch.arange(len(image), device=image.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2
