"""The Mamba-1 block (selective S6 scan) used by both Fourier branches (spec fourier_mamba §3.4).

Per token x_t ∈ R^d_model: in-projection to (x, z) of width d_inner = expand·d_model, a causal
depthwise conv1d of width 4 and SiLU on x, then the input-dependent Δ_t = softplus(W_Δ x_t + b_Δ),
B_t = W_B x_t, C_t = W_C x_t, the selective scan with A = −exp(A_log) (d_inner × N), skip D, gate
y ⊙ SiLU(z), and the out-projection. A_log starts at log(1..N); b_Δ is set so Δ starts in
[1e-3, 0.1] (log-uniform), as in state-spaces/mamba. The scan is one of the three implementations
of :mod:`paperworks_kernels.selective_scan` (``auto``: Triton on CUDA, chunked PyTorch on CPU).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from paperworks_kernels.selective_scan import Impl, selective_scan


class MambaBlock(nn.Module):
    """Sequence-to-sequence Mamba-1 mixer: (batch, L, d_model) → (batch, L, d_model)."""

    def __init__(
        self,
        d_model: int,
        d_state: int = 16,
        expand: int = 2,
        d_conv: int = 4,
        dt_min: float = 1e-3,
        dt_max: float = 0.1,
        scan_impl: Impl = "auto",
    ) -> None:
        super().__init__()
        d_inner = expand * d_model
        self.d_inner, self.d_state, self.scan_impl = d_inner, d_state, scan_impl
        self.dt_rank = max(1, math.ceil(d_model / 16))
        self.in_proj = nn.Linear(d_model, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, self.dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(self.dt_rank, d_inner, bias=True)
        self.out_proj = nn.Linear(d_inner, d_model, bias=False)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, d_state + 1, dtype=torch.float32)).repeat(d_inner, 1))
        self.D = nn.Parameter(torch.ones(d_inner))
        with torch.no_grad():
            nn.init.uniform_(self.dt_proj.weight, -(self.dt_rank**-0.5), self.dt_rank**-0.5)
            dt = torch.exp(torch.rand(d_inner) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.shape[1]
        xz = self.in_proj(x).transpose(1, 2)  # (b, 2·d_inner, L)
        u, z = xz.chunk(2, dim=1)
        u = F.silu(self.conv1d(u)[..., :length])  # causal: keep the first L outputs
        dbc = self.x_proj(u.transpose(1, 2))  # (b, L, r + 2N)
        dt, b_, c_ = dbc.split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = (dt @ self.dt_proj.weight.t()).transpose(1, 2)  # (b, d_inner, L); bias added in the scan
        y = selective_scan(
            u,
            delta,
            -torch.exp(self.A_log.float()),
            b_.transpose(1, 2),
            c_.transpose(1, 2),
            self.D.float(),
            z,
            self.dt_proj.bias.float(),
            delta_softplus=True,
            impl=self.scan_impl,
        )
        return self.out_proj(y.transpose(1, 2))
