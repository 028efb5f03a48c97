"""Perplexity (GPTQ protocol, spec §4/§6.4) and per-layer output error.

Perplexity = exp(mean next-token NLL) over all predicted tokens of fixed,
non-overlapping windows. The layer output error of a quantized linear layer is
``mean((X Wᵀ − X Ŵᵀ)²)`` on that layer's full-precision inputs X from the
calibration prompt (§6.4).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from methods.any4.modules import QuantLinear


@torch.no_grad()
def perplexity(model: nn.Module, windows: torch.Tensor, *, batch_size: int = 1, progress=None) -> float:
    """exp(mean NLL) of ``windows`` (n, L): each window predicts its tokens 2..L from their prefixes."""
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    n = windows.shape[0]
    for i in range(0, n, batch_size):
        ids = windows[i : i + batch_size].to(device)
        logits = model(input_ids=ids).logits[:, :-1].float()
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="sum")
        total += float(nll)
        count += ids[:, 1:].numel()
        if progress is not None:
            progress(min(1.0, (i + batch_size) / n), f"perplexity {min(i + batch_size, n)}/{n}")
    return math.exp(total / count)


@torch.no_grad()
def window_nll(model: nn.Module, windows: torch.Tensor) -> list[float]:
    """Summed next-token NLL of each window (n, L); every window predicts L − 1 tokens.

    ``exp(sum(window_nll) / (n·(L − 1)))`` is :func:`perplexity`; keeping the windows apart lets two
    models be compared window by window (:func:`paired_ppl_ratio`).
    """
    model.eval()
    device = next(model.parameters()).device
    out = []
    for i in range(windows.shape[0]):
        ids = windows[i : i + 1].to(device)
        logits = model(input_ids=ids).logits[:, :-1].float()
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="sum")
        out.append(float(nll))
    return out


def ppl_from_nll(nll: list[float], tokens_per_window: int) -> float:
    return math.exp(sum(nll) / (len(nll) * tokens_per_window))


def paired_ppl_ratio(
    nll_a: list[float], nll_b: list[float], tokens_per_window: int, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """ppl(a) / ppl(b) and its 95% paired percentile-bootstrap CI, resampling evaluation windows.

    Both models are scored on the same windows, so each resample draws window indices once and
    uses them for both: the interval reflects which windows were evaluated, not model noise.
    """
    import numpy as np

    from core.stats import paired_bootstrap_ci

    a, b = np.asarray(nll_a, dtype=float), np.asarray(nll_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError("need the same non-empty set of windows for both models")
    scale = len(a) * tokens_per_window
    ratio = math.exp((a.sum() - b.sum()) / scale)
    ci = paired_bootstrap_ci(
        a, b, lambda x, y: np.exp((x.sum(axis=1) - y.sum(axis=1)) / scale), n_boot=n_boot, seed=seed, vectorized=True
    )
    return ratio, ci.low, ci.high


@torch.no_grad()
def capture_inputs(model: nn.Module, input_ids: torch.Tensor, names: list[str]) -> dict[str, torch.Tensor]:
    """Each named module's input (T, K) during one forward pass of ``input_ids``."""
    store: dict[str, torch.Tensor] = {}
    mods = dict(model.named_modules())
    handles = [
        mods[n].register_forward_hook(
            lambda m, a, o, n=n: store.__setitem__(n, a[0].detach().reshape(-1, a[0].shape[-1]).float().cpu())
        )
        for n in names
    ]
    try:
        model(input_ids=input_ids.to(next(model.parameters()).device))
    finally:
        for h in handles:
            h.remove()
    return store


@torch.no_grad()
def layer_output_mse(
    qmodel: nn.Module, fp_weights: dict[str, torch.Tensor], inputs: dict[str, torch.Tensor]
) -> dict[str, float]:
    """name → mean((X Wᵀ − X Ŵᵀ)²) for every ``QuantLinear`` of ``qmodel``."""
    out = {}
    for name, mod in qmodel.named_modules():
        if isinstance(mod, QuantLinear) and name in inputs:
            diff = fp_weights[name].float() - mod.dequantized_weight()
            out[name] = float(((inputs[name].to(diff.device) @ diff.t()) ** 2).mean())
    return out
