"""The FLUX timestep schedule with its resolution-dependent shift (spec §3.3).

Notation (spec §3.1): ``t = 1`` is noise, ``t = 0`` is data. The base grid is
``linspace(1, 0, N + 1)``; flux-dev warps it with

    t' = e^μ / (e^μ + (1/t − 1)^σ),   σ = 1,                               (§3.3)

where μ is linear in the packed image sequence length ``L``:

    μ(L) = 0.5 + (1.15 − 0.5) · (L − 256) / (4096 − 256).

The endpoints stay exactly 1 and 0. ``shift=False`` (flux-schnell) returns the
plain linear grid.
"""

from __future__ import annotations

import math

import torch

BASE_SEQ_LEN = 256
MAX_SEQ_LEN = 4096
BASE_SHIFT = 0.5
MAX_SHIFT = 1.15


def mu_for_length(
    seq_len: int,
    *,
    base_len: int = BASE_SEQ_LEN,
    max_len: int = MAX_SEQ_LEN,
    base_shift: float = BASE_SHIFT,
    max_shift: float = MAX_SHIFT,
) -> float:
    """μ(L): the linear map through (256, 0.5) and (4096, 1.15) (spec §3.3)."""
    slope = (max_shift - base_shift) / (max_len - base_len)
    return base_shift + slope * (seq_len - base_len)


def time_shift(mu: float, t: torch.Tensor, sigma: float = 1.0) -> torch.Tensor:
    """t' = e^μ / (e^μ + (1/t − 1)^σ), with t' = 0 at t = 0 and t' = 1 at t = 1 exactly."""
    t = t.to(torch.float64)
    out = torch.empty_like(t)
    zero, one = t <= 0.0, t >= 1.0
    mid = ~(zero | one)
    out[zero], out[one] = 0.0, 1.0
    out[mid] = math.exp(mu) / (math.exp(mu) + (1.0 / t[mid] - 1.0) ** sigma)
    return out


def flux_seq_len(height: int, width: int) -> int:
    """Packed FLUX sequence length L = (H/16)·(W/16) for an H×W image (VAE /8, 2×2 packing)."""
    return (height // 16) * (width // 16)


def get_schedule(num_steps: int, seq_len: int = BASE_SEQ_LEN, shift: bool = True) -> list[float]:
    """The N+1 timesteps from 1 down to 0, shifted by μ(seq_len) unless ``shift`` is False.

    Args:
        num_steps: N, the number of intervals (≥ 1).
        seq_len: L, the model's image token count (FLUX: packed latent length; ours: patch count).
        shift: apply the flux-dev shift (True) or return ``linspace(1, 0, N+1)`` (flux-schnell).

    Returns:
        A python list of N+1 floats, strictly decreasing, ``[1.0, ..., 0.0]``. Python floats
        are used on purpose: they are the exact keys of the V cache (spec §3.5).
    """
    if num_steps < 1:
        raise ValueError("num_steps must be >= 1")
    t = torch.linspace(1.0, 0.0, num_steps + 1, dtype=torch.float64)
    if shift:
        t = time_shift(mu_for_length(seq_len), t)
    ts = [float(x) for x in t.tolist()]
    ts[0], ts[-1] = 1.0, 0.0
    return ts
