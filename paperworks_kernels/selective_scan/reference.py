"""Sequential fp32 reference of the selective scan (Mamba-1 S6 and the Mamba-2 scalar-A variant).

This is the ground truth the chunked PyTorch version and the Triton kernel are tested
against (spec fourier_mamba §3.4, §6, §7.3). Notation (channels-first, as in
``mamba_ssm.ops.selective_scan_interface.selective_scan_ref``)::

    u      (b, d, L)  input x_t
    delta  (b, d, L)  Δ_t before bias/softplus        — Mamba-2: (b, h, L), one Δ per head
    A      (d, N)     A = −exp(A_log)                 — Mamba-2: (h,), one scalar per head
    B, C   (b, N, L)  input-dependent B_t, C_t
    D      (d,)       skip                            — Mamba-2: (d,) or (h,)
    z      (b, d, L)  gate: y ⊙ SiLU(z)
    delta_bias (d,) or (h,); delta_softplus: Δ = softplus(Δ + bias)

    Ā_t = exp(Δ_t ⊙ A)
    h_t = Ā_t ⊙ h_{t−1} + (Δ_t ⊙ x_t) · B_t,   h_0 = 0        (h_t ∈ R^{d×N})
    y_t = h_t · C_t + D ⊙ x_t,  then y ⊙ SiLU(z)

The Mamba-2 variant is the same recurrence with every channel of head k (channels
k·P … k·P+P−1, P = d/h) reading Δ and A of head k; A is the same for all N states.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class ScanShape:
    """Sizes of one scan call; ``heads == dim`` (``head_dim == 1``) and ``scalar_a=False`` for Mamba-1."""

    batch: int
    dim: int
    length: int
    state: int
    heads: int
    head_dim: int
    scalar_a: bool


def check_scan_inputs(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
) -> ScanShape:
    """Validate the operand shapes (see the module docstring); return the sizes."""
    if u.dim() != 3:
        raise ValueError(f"u must be (batch, dim, length), got {tuple(u.shape)}")
    b, d, L = u.shape
    if A.dim() == 2:
        scalar_a, h, n = False, d, A.shape[1]
        if A.shape[0] != d:
            raise ValueError(f"A must be (dim, N) = ({d}, N), got {tuple(A.shape)}")
    elif A.dim() == 1:
        scalar_a, h = True, A.shape[0]
        if h < 1 or d % h:
            raise ValueError(f"scalar-per-head A has {h} heads, which must divide dim={d}")
        n = B.shape[1] if B.dim() == 3 else -1
    else:
        raise ValueError(f"A must be (dim, N) or (heads,), got {tuple(A.shape)}")
    if delta.shape != (b, h, L):
        raise ValueError(f"delta must be {(b, h, L)}, got {tuple(delta.shape)}")
    for name, t in (("B", B), ("C", C)):
        if t.shape != (b, n, L):
            raise ValueError(f"{name} must be {(b, n, L)} (batch, N, length), got {tuple(t.shape)}")
    if n < 1:
        raise ValueError("N must be >= 1")
    if D is not None and D.shape not in ((d,), (h,)):
        raise ValueError(f"D must be ({d},) or ({h},), got {tuple(D.shape)}")
    if z is not None and z.shape != u.shape:
        raise ValueError(f"z must be {tuple(u.shape)}, got {tuple(z.shape)}")
    if delta_bias is not None and delta_bias.shape != (h,):
        raise ValueError(f"delta_bias must be ({h},), got {tuple(delta_bias.shape)}")
    return ScanShape(b, d, L, n, h, d // h, scalar_a)


def per_channel(t: torch.Tensor | None, shape: ScanShape, dim: int = 0) -> torch.Tensor | None:
    """Repeat a per-head tensor along ``dim`` so that every channel of a head gets its value."""
    if t is None or t.shape[dim] == shape.dim:
        return t
    return t.repeat_interleave(shape.head_dim, dim=dim)


def prepare_delta(delta: torch.Tensor, delta_bias: torch.Tensor | None, softplus: bool) -> torch.Tensor:
    """Δ = softplus(Δ + bias) (or Δ + bias) in fp32."""
    delta = delta.float()
    if delta_bias is not None:
        delta = delta + delta_bias.float()[:, None]
    return F.softplus(delta) if softplus else delta


def selective_scan_reference(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = False,
    return_last_state: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """The selective scan by an explicit loop over L in fp32 (the ground truth).

    Returns y (b, d, L) in ``u.dtype``; with ``return_last_state`` also h_L (b, d, N) in fp32.
    """
    shape = check_scan_inputs(u, delta, A, B, C, D, z, delta_bias)
    dt = per_channel(prepare_delta(delta, delta_bias, delta_softplus), shape, dim=1)  # (b, d, L)
    a = A.float()
    a = per_channel(a, shape)[:, None].expand(shape.dim, shape.state) if shape.scalar_a else a  # (d, N)
    x, b_, c_ = u.float(), B.float(), C.float()
    h = x.new_zeros(shape.batch, shape.dim, shape.state)
    ys = []
    for t in range(shape.length):
        decay = torch.exp(dt[:, :, t, None] * a)  # Ā_t
        h = decay * h + (dt[:, :, t] * x[:, :, t])[:, :, None] * b_[:, None, :, t]
        ys.append((h * c_[:, None, :, t]).sum(-1))
    y = torch.stack(ys, dim=-1) if ys else x.new_zeros(x.shape)
    if D is not None:
        y = y + x * per_channel(D.float(), shape)[:, None]
    if z is not None:
        y = y * F.silu(z.float())
    y = y.to(u.dtype)
    return (y, h) if return_last_state else y
