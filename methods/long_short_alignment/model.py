"""A small causal transformer with NoPE / RoPE / sinusoidal / learned-absolute positions (spec §6.1, §6.2).

Position options and length behaviour:

- ``nope``: no positional signal; any length runs (the causal mask alone carries order).
- ``rope``: rotary embeddings computed for any position; ``rope_scale`` < 1 is position interpolation.
- ``sinusoidal``: fixed absolute sin/cos added to the embeddings, computed for any position.
- ``learned``: a learned absolute table of ``max_positions`` rows; a longer input raises ``ValueError``
  (it cannot extrapolate; included only for demonstration, as the spec says).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

PositionEncoding = Literal["nope", "rope", "sinusoidal", "learned"]


def sinusoidal_table(n: int, d: int, device: torch.device | str | None = None) -> torch.Tensor:
    """The fixed sin/cos position table [n, d], built on ``device``."""
    pos = torch.arange(n, dtype=torch.float32, device=device)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32, device=device) * (-math.log(10000.0) / d))
    table = torch.zeros(n, d, device=device)
    table[:, 0::2] = torch.sin(pos * div)
    table[:, 1::2] = torch.cos(pos * div[: d // 2])
    return table


def rope_rotate(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Rotary embedding of ``x`` [B, H, T, Dh] at positions ``0..T-1`` (times ``scale``)."""
    t, dh = x.shape[-2], x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, dh, 2, dtype=torch.float32, device=x.device) / dh))
    ang = (torch.arange(t, dtype=torch.float32, device=x.device) * scale)[:, None] * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return out.flatten(-2)


class Block(nn.Module):
    def __init__(self, d: int, heads: int, ffn: int, pe: str, rope_scale: float, swiglu: bool) -> None:
        super().__init__()
        self.heads, self.pe, self.rope_scale = heads, pe, rope_scale
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.swiglu = swiglu
        self.up = nn.Linear(d, 2 * ffn if swiglu else ffn)
        self.down = nn.Linear(ffn, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.pe == "rope":
            q, k = rope_rotate(q, self.rope_scale), rope_rotate(k, self.rope_scale)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        h = self.up(self.n2(x))
        if self.swiglu:
            g, u = h.chunk(2, dim=-1)
            h = F.silu(g) * u
        else:
            h = F.gelu(h)
        return x + self.down(h)


class CausalTransformer(nn.Module):
    """Pre-norm causal transformer; ``out_dim=None`` ties the head to the embeddings (a language model)."""

    def __init__(
        self,
        vocab: int,
        *,
        d: int = 64,
        heads: int = 4,
        layers: int = 2,
        ffn: int = 128,
        pe: PositionEncoding = "nope",
        out_dim: int | None = 1,
        max_positions: int = 11,
        rope_scale: float = 1.0,
        swiglu: bool = False,
    ) -> None:
        super().__init__()
        if pe not in ("nope", "rope", "sinusoidal", "learned"):
            raise ValueError(f"unknown position encoding {pe!r}")
        self.pe, self.max_positions, self.d = pe, max_positions, d
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_positions, d) if pe == "learned" else None
        self.blocks = nn.ModuleList(Block(d, heads, ffn, pe, rope_scale, swiglu) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, out_dim) if out_dim is not None else None
        nn.init.normal_(self.emb.weight, std=0.02)
        if self.pos is not None:
            nn.init.normal_(self.pos.weight, std=0.02)

    def set_rope_scale(self, scale: float) -> None:
        for blk in self.blocks:
            blk.rope_scale = scale

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        x = self.emb(tokens)
        if self.pe == "learned":
            if t > self.max_positions:
                raise ValueError(
                    f"learned absolute positions cover {self.max_positions} positions; input has {t} "
                    "(learned embeddings cannot extrapolate — use nope, rope or sinusoidal)"
                )
            x = x + self.pos.weight[:t]
        elif self.pe == "sinusoidal":
            x = x + sinusoidal_table(t, self.d, x.device).to(x.dtype)
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.head(x) if self.head is not None else x @ self.emb.weight.T
