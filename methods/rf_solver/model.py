"""A DiT-style rectified-flow transformer with FLUX's late single-stream blocks (spec §6.2).

Layout (bottom-up): patch embedding + learned positions → ``single_from`` adaLN-zero
DiT blocks in which image tokens attend to ``[label tokens ; image tokens]`` (stand-ins
for FLUX's double-stream blocks; time enters through the modulation vector) →
single-stream blocks on ``[label tokens ; image tokens]`` with FLUX's fused
attention + MLP → adaLN final layer → unpatchify. The output is the velocity
v_θ(Z_t, t, c) ≈ ε − X_0 (spec §3.1).

Every attention exposes a tap: ``tap.on_qkv(block_id, q, k, v) -> (q, k, v)`` is called
after the fused qkv projection and head split, with q, k, v of shape
(B, heads, L, head_dim). RF-Edit's V cache records or replaces V there (spec §3.5).
"""

from __future__ import annotations

import math
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from methods.rf_solver.config import DiTConfig


class AttentionTap(Protocol):
    """Sees (and may replace) q, k, v of every attention."""

    def on_qkv(
        self, block_id: int, q: torch.Tensor | None, k: torch.Tensor | None, v: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor]: ...


def timestep_embedding(t: torch.Tensor, dim: int, scale: float = 1000.0) -> torch.Tensor:
    """Sinusoidal embedding of t·scale, shape (B, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = (t.float() * scale)[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1 + scale[:, None]) + shift[:, None]


class QKNorm(nn.Module):
    """RMS normalisation of q and k per head (as in FLUX)."""

    def __init__(self, head_dim: int) -> None:
        super().__init__()
        self.q = nn.RMSNorm(head_dim)
        self.k = nn.RMSNorm(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q(q), self.k(k)


def attention(qkv: torch.Tensor, heads: int, norm: QKNorm, block_id: int, tap: AttentionTap | None) -> torch.Tensor:
    """Split (B, L, 3D) into heads, let the tap see q/k/v, attend; returns (B, L, D)."""
    b, n, three_d = qkv.shape
    d = three_d // 3
    q, k, v = qkv.view(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)  # each (B, H, L, hd)
    q, k = norm(q, k)
    if tap is not None:
        q, k, v = tap.on_qkv(block_id, q, k, v)
    out = F.scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2).reshape(b, n, d)


class ImageBlock(nn.Module):
    """adaLN-zero DiT block: image tokens attend to the label tokens and themselves; only they are updated.

    Our stand-in for FLUX's double-stream blocks (which also refine the text stream with their
    own weights; here the label tokens pass through unchanged).
    """

    def __init__(self, cfg: DiTConfig, block_id: int) -> None:
        super().__init__()
        d, hidden = cfg.width, int(cfg.width * cfg.mlp_ratio)
        self.block_id, self.heads = block_id, cfg.heads
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(d, 3 * d)
        self.qk_norm = QKNorm(d // cfg.heads)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(approximate="tanh"), nn.Linear(hidden, d))
        self.ada = nn.Linear(cfg.cond_dim, 6 * d)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor, c: torch.Tensor, tap: AttentionTap | None) -> torch.Tensor:
        """x: image tokens (B, L, D); ctx: label tokens (B, n, D), read but not updated."""
        sh1, sc1, g1, sh2, sc2, g2 = self.ada(c).chunk(6, dim=-1)
        h = self.qkv(modulate(self.norm1(torch.cat([ctx, x], dim=1)), sh1, sc1))
        a = attention(h, self.heads, self.qk_norm, self.block_id, tap)[:, ctx.shape[1] :]
        x = x + g1[:, None] * self.proj(a)
        return x + g2[:, None] * self.mlp(modulate(self.norm2(x), sh2, sc2))


class SingleStreamBlock(nn.Module):
    """FLUX single-stream block: one fused linear gives qkv and the MLP input, in parallel."""

    def __init__(self, cfg: DiTConfig, block_id: int) -> None:
        super().__init__()
        d = cfg.width
        self.hidden = int(d * cfg.mlp_ratio)
        self.block_id, self.heads = block_id, cfg.heads
        self.norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.linear1 = nn.Linear(d, 3 * d + self.hidden)
        self.qk_norm = QKNorm(d // cfg.heads)
        self.linear2 = nn.Linear(d + self.hidden, d)
        self.ada = nn.Linear(cfg.cond_dim, 3 * d)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)

    def forward(self, x: torch.Tensor, c: torch.Tensor, tap: AttentionTap | None) -> torch.Tensor:
        shift, scale, gate = self.ada(c).chunk(3, dim=-1)
        h = self.linear1(modulate(self.norm(x), shift, scale))
        qkv, mlp = h.split([h.shape[-1] - self.hidden, self.hidden], dim=-1)
        a = attention(qkv, self.heads, self.qk_norm, self.block_id, tap)
        return x + gate[:, None] * self.linear2(torch.cat([a, F.gelu(mlp, approximate="tanh")], dim=-1))


class RFDiT(nn.Module):
    """Class-conditional rectified-flow DiT: ``forward(x, t, y, tap) -> v`` with x (B, C, H, W)."""

    def __init__(self, cfg: DiTConfig) -> None:
        super().__init__()
        if cfg.image_size % cfg.patch_size or cfg.width % cfg.heads:
            raise ValueError("image_size must divide by patch_size and width by heads")
        self.cfg = cfg
        d, p = cfg.width, cfg.patch_size
        self.patch = nn.Linear(cfg.channels * p * p, d)
        self.pos = nn.Parameter(torch.randn(1, cfg.tokens, d) * 0.02)
        self.t_mlp = nn.Sequential(nn.Linear(64, cfg.cond_dim), nn.SiLU(), nn.Linear(cfg.cond_dim, cfg.cond_dim))
        self.y_vec = nn.Embedding(cfg.num_labels + 1, cfg.cond_dim) if cfg.label_in_vector != "none" else None
        self.y_tok = nn.Embedding(cfg.num_labels + 1, cfg.label_tokens * d)  # "prompt" tokens
        self.blocks = nn.ModuleList(
            [ImageBlock(cfg, i) if i < cfg.single_from else SingleStreamBlock(cfg, i) for i in range(cfg.depth)]
        )
        self.final_norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.final_ada = nn.Linear(cfg.cond_dim, 2 * d)
        self.out = nn.Linear(d, cfg.channels * p * p)
        for layer in (self.final_ada, self.out):
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def patchify(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) → (B, L, C·p²)."""
        b, c, h, w = x.shape
        p = self.cfg.patch_size
        x = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)
        return x.reshape(b, (h // p) * (w // p), c * p * p)

    def unpatchify(self, x: torch.Tensor) -> torch.Tensor:
        """(B, L, C·p²) → (B, C, H, W)."""
        cfg, b = self.cfg, x.shape[0]
        p, g = cfg.patch_size, cfg.image_size // cfg.patch_size
        x = x.reshape(b, g, g, cfg.channels, p, p).permute(0, 3, 1, 4, 2, 5)
        return x.reshape(b, cfg.channels, g * p, g * p)

    def forward(
        self, x: torch.Tensor, t: torch.Tensor | float, y: torch.Tensor, tap: AttentionTap | None = None
    ) -> torch.Tensor:
        b = x.shape[0]
        if not torch.is_tensor(t) or t.ndim == 0:
            t = torch.full((b,), float(t), device=x.device)
        vec = self.t_mlp(timestep_embedding(t, 64))
        c_lab = F.silu(vec + self.y_vec(y)) if self.y_vec is not None else F.silu(vec)
        c_late = c_lab if self.cfg.label_in_vector == "all" else F.silu(vec)
        h = self.patch(self.patchify(x)) + self.pos
        ctx = self.y_tok(y).view(b, self.cfg.label_tokens, -1)  # the "prompt" tokens
        for block in self.blocks:
            if isinstance(block, ImageBlock):
                h = block(h, ctx, c_lab, tap)
            else:
                if h.shape[1] == self.cfg.tokens:
                    h = torch.cat([ctx, h], dim=1)  # join the label tokens
                h = block(h, c_late, tap)
        h = h[:, -self.cfg.tokens :]
        shift, scale = self.final_ada(c_late).chunk(2, dim=-1)
        return self.unpatchify(self.out(modulate(self.final_norm(h), shift, scale)))


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
