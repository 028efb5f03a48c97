"""The M3-JEPA losses (spec §3.3): symmetric InfoNCE (τ = 0.03) + SmoothL1 regression.

* InfoNCE(a, b) = CE(softmax(â b̂ᵀ / τ), diag) with â, b̂ L2-normalised rows (in-batch negatives);
* L_cl = ½ [InfoNCE(ŷ_cl, y_cl) + InfoNCE(y_cl, ŷ_cl)];
* L_reg = SmoothL1(ŷ_pred, y_pred), Huber β = 1, mean reduction;
* L_{s→τ} = w_task · (w_cl · L_cl + w_reg · L_reg), w_task = 0.5, w_cl = w_reg = 1.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

TAU = 0.03


def info_nce(a: torch.Tensor, b: torch.Tensor, tau: float = TAU) -> torch.Tensor:
    """Rows of ``a`` classify their partner row of ``b`` among all rows of ``b``."""
    logits = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T / tau
    return F.cross_entropy(logits, torch.arange(len(a), device=a.device))


def symmetric_info_nce(a: torch.Tensor, b: torch.Tensor, tau: float = TAU) -> torch.Tensor:
    return 0.5 * (info_nce(a, b, tau) + info_nce(b, a, tau))


def regression(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.smooth_l1_loss(pred, target, beta=1.0)


def direction_loss(
    cl_pred: torch.Tensor,
    cl_target: torch.Tensor,
    pred: torch.Tensor,
    target: torch.Tensor,
    *,
    w_task: float = 0.5,
    w_cl: float = 1.0,
    w_reg: float = 1.0,
    tau: float = TAU,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """w_task · (w_cl · L_cl + w_reg · L_reg) and the two terms (detached 0-dim tensors: no read-back here)."""
    l_cl = symmetric_info_nce(cl_pred, cl_target, tau)
    l_reg = regression(pred, target)
    total = w_task * (w_cl * l_cl + w_reg * l_reg)
    return total, {"cl": l_cl.detach(), "reg": l_reg.detach()}
