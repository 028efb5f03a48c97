"""Tiny-ViT and Tiny-Adventurer of spec §6, with a kernel = stride = p patch embedding.

Only the patch size p changes between runs: width, depth, heads and the mixer stay fixed,
and the learned position embedding has N + 1 entries (N = (S/p)² patch tokens + one class
token). ViT puts the class token first; Adventurer (causal) puts it last.

Adventurer block (pre-norm, spec §3.2): x = RMSNorm(h); optionally flip all tokens but the
last; prepend the heading-average token (mean over tokens); Mamba-2 mixer; drop the first
output; un-flip; h += x; h += SwiGLU(RMSNorm(h)). Flip rule "released" is the code's
``layer_index // 2 == 1`` (layers 2 and 3 only); "alternate" is ``(layer_index // 2) % 2 == 1``.

Mamba-2 mixer: in_proj → (z, xBC, dt); causal depthwise conv (width 4) + SiLU on xBC; the
scalar-A-per-head selective scan of :mod:`paperworks_kernels.selective_scan`
(h_t = exp(Δ_t·A)·h_{t−1} + Δ_t·x_t ⊗ B_t, y_t = h_t·C_t + D·x_t, B/C shared by all heads);
gated RMSNorm (norm after the SiLU(z) gate); out_proj. No biases in the projections.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from paperworks_kernels.selective_scan import Impl, selective_scan

FlipRule = Literal["released", "alternate", "none"]


# --- patch embedding and position embeddings ----------------------------------------
class PatchEmbed(nn.Module):
    """Conv2d with kernel = stride = p, C → d channels, flattened to (B, N, d) in row-major order."""

    def __init__(self, image_size: int, patch: int, in_chans: int, dim: int) -> None:
        super().__init__()
        if image_size % patch:
            raise ValueError(f"patch size {patch} must divide the image size {image_size}")
        self.patch = patch
        self.grid = image_size // patch
        self.num_tokens = self.grid**2
        self.proj = nn.Conv2d(in_chans, dim, kernel_size=patch, stride=patch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x).flatten(2).transpose(1, 2)


def patchify(x: torch.Tensor, p: int) -> torch.Tensor:
    """(B, C, S, S) → (B, N, C·p·p), each token the (c, i, j)-ordered pixels of one patch."""
    b, c, s, _ = x.shape
    g = s // p
    return x.reshape(b, c, g, p, g, p).permute(0, 2, 4, 1, 3, 5).reshape(b, g * g, c * p * p)


def unpatchify(tokens: torch.Tensor, p: int, channels: int) -> torch.Tensor:
    """Inverse of :func:`patchify`."""
    b, n, _ = tokens.shape
    g = math.isqrt(n)
    return tokens.reshape(b, g, g, channels, p, p).permute(0, 3, 1, 4, 2, 5).reshape(b, channels, g * p, g * p)


def interpolate_pos_embed(pos: torch.Tensor, new_grid: int, *, cls_last: bool = True) -> torch.Tensor:
    """Bicubic resize of the grid part of a (1, N+1, d) position embedding; the class slot is kept as is.

    Unlike the reference ``main.py`` (which treats the *first* extra entries as the class
    token), the class slot is taken from where the model keeps it: last for Adventurer.
    """
    n = pos.shape[1] - 1
    g = math.isqrt(n)
    if g * g != n:
        raise ValueError(f"position embedding has {n} grid entries, not a square")
    grid, cls = (pos[:, :n], pos[:, n:]) if cls_last else (pos[:, 1:], pos[:, :1])
    if new_grid != g:
        d = pos.shape[2]
        img = grid.reshape(1, g, g, d).permute(0, 3, 1, 2)
        img = F.interpolate(img.float(), size=(new_grid, new_grid), mode="bicubic", align_corners=False)
        grid = img.permute(0, 2, 3, 1).reshape(1, new_grid * new_grid, d).to(pos.dtype)
    return torch.cat([grid, cls], 1) if cls_last else torch.cat([cls, grid], 1)


class DropPath(nn.Module):
    def __init__(self, rate: float) -> None:
        super().__init__()
        self.rate = rate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.rate == 0.0:
            return x
        keep = 1.0 - self.rate
        mask = x.new_empty(x.shape[0], *([1] * (x.dim() - 1))).bernoulli_(keep)
        return x * mask / keep


# --- Tiny-ViT -----------------------------------------------------------------------
class TinyViT(nn.Module):
    """DeiT-style ViT: class token first, learned position embedding, pre-norm blocks."""

    def __init__(
        self,
        image_size: int = 8,
        patch: int = 1,
        in_chans: int = 1,
        num_classes: int = 10,
        dim: int = 64,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: float = 4.0,
        drop_path: float = 0.0,
    ) -> None:
        super().__init__()
        self.patch_embed = PatchEmbed(image_size, patch, in_chans, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_tokens + 1, dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                dim, heads, int(dim * mlp_ratio), dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.patch_embed(x)
        t = torch.cat([self.cls_token.expand(t.shape[0], -1, -1), t], 1) + self.pos_embed
        for blk in self.blocks:
            t = blk(t)
        return self.head(self.norm(t)[:, 0])


# --- Tiny-Adventurer ----------------------------------------------------------------
class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor, gate: torch.Tensor | None = None) -> torch.Tensor:
        if gate is not None:  # gated RMSNorm, norm after gate (Mamba-2's norm_before_gate=False)
            x = x * F.silu(gate)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.w12 = nn.Linear(dim, 2 * hidden)
        self.w3 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(a) * b)


class Mamba2Mixer(nn.Module):
    """Mamba-2 (SSD) mixer at tiny scale; ngroups = 1, scalar A per head."""

    def __init__(
        self,
        dim: int,
        d_state: int = 16,
        headdim: int = 16,
        expand: int = 2,
        d_conv: int = 4,
        dt_min: float = 1e-3,
        dt_max: float = 0.1,
        dt_floor: float = 1e-4,
        impl: Impl = "auto",
        chunk: int = 256,
    ) -> None:
        super().__init__()
        self.inner = expand * dim
        if self.inner % headdim:
            raise ValueError("expand·dim must be a multiple of headdim")
        self.nheads = self.inner // headdim
        self.d_state, self.impl, self.chunk = d_state, impl, chunk
        conv_dim = self.inner + 2 * d_state
        self.in_proj = nn.Linear(dim, 2 * self.inner + 2 * d_state + self.nheads, bias=False)
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, d_conv, groups=conv_dim, padding=d_conv - 1)
        dt = torch.exp(torch.rand(self.nheads) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
        dt = dt.clamp(min=dt_floor)
        self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus
        self.A_log = nn.Parameter(torch.log(torch.empty(self.nheads).uniform_(1, 16)))
        self.D = nn.Parameter(torch.ones(self.nheads))
        self.norm = RMSNorm(self.inner)
        self.out_proj = nn.Linear(self.inner, dim, bias=False)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        L = u.shape[1]
        z, xbc, dt = torch.split(self.in_proj(u), [self.inner, self.inner + 2 * self.d_state, self.nheads], dim=-1)
        xbc = F.silu(self.conv1d(xbc.transpose(1, 2))[..., :L])  # causal: keep the first L outputs
        x, B, C = torch.split(xbc, [self.inner, self.d_state, self.d_state], dim=1)
        kwargs = {"chunk": self.chunk} if self.impl in ("chunked", "auto") and u.device.type != "cuda" else {}
        y = selective_scan(
            x,
            dt.transpose(1, 2),
            -torch.exp(self.A_log.float()),
            B,
            C,
            self.D,
            delta_bias=self.dt_bias,
            delta_softplus=True,
            impl=self.impl,
            **kwargs,
        )
        return self.out_proj(self.norm(y.transpose(1, 2), gate=z))


def flip_tokens(x: torch.Tensor) -> torch.Tensor:
    """Reverse every token but the last (the class token stays last); an involution."""
    return torch.cat([x[:, :-1].flip(1), x[:, -1:]], 1)


def flips(layer_index: int, rule: FlipRule) -> bool:
    """Whether layer ``layer_index`` flips the token order."""
    if rule == "released":
        return layer_index // 2 == 1  # the released code: true for layers 2 and 3 only
    if rule == "alternate":
        return (layer_index // 2) % 2 == 1  # the comment's intent: every two blocks
    return False


class AdventurerBlock(nn.Module):
    def __init__(self, dim: int, layer_index: int, flip_rule: FlipRule, drop_path: float, **mixer) -> None:
        super().__init__()
        self.flip = flips(layer_index, flip_rule)
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.mixer = Mamba2Mixer(dim, **mixer)
        self.mlp = SwiGLU(dim, int(2.5 * dim))
        self.drop_path = DropPath(drop_path)
        self.mixer_len: int | None = None  # tokens the mixer saw in the last call (checked by the tests)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        x = self.norm1(h)
        if self.flip:
            x = flip_tokens(x)
        x = torch.cat([x.mean(1, keepdim=True), x], 1)  # heading-average token
        self.mixer_len = x.shape[1]
        x = self.mixer(x)[:, 1:]
        if self.flip:
            x = flip_tokens(x)
        h = h + self.drop_path(x)
        return h + self.drop_path(self.mlp(self.norm2(h)))


class TinyAdventurer(nn.Module):
    """Adventurer at tiny scale: class token last, heading average, flips, Mamba-2 mixers."""

    def __init__(
        self,
        image_size: int = 8,
        patch: int = 1,
        in_chans: int = 1,
        num_classes: int = 10,
        dim: int = 64,
        depth: int = 4,
        d_state: int = 16,
        headdim: int = 16,
        expand: int = 2,
        flip_rule: FlipRule = "released",
        drop_path: float = 0.0,
        impl: Impl = "auto",
    ) -> None:
        super().__init__()
        self.patch_embed = PatchEmbed(image_size, patch, in_chans, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_tokens + 1, dim))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        rates = [0.0] + torch.linspace(0, drop_path, depth).tolist()  # index i for layer i (released schedule)
        self.blocks = nn.ModuleList(
            AdventurerBlock(dim, i, flip_rule, rates[i], d_state=d_state, headdim=headdim, expand=expand, impl=impl)
            for i in range(depth)
        )
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        fan_in = self.patch_embed.proj.weight[0].numel()  # lecun-normal patch conv
        nn.init.trunc_normal_(self.patch_embed.proj.weight, std=1.0 / math.sqrt(fan_in))
        for blk in self.blocks:  # Mamba-style rescale of out_proj
            with torch.no_grad():
                blk.mixer.out_proj.weight.div_(math.sqrt(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.patch_embed(x)
        t = torch.cat([t, self.cls_token.expand(t.shape[0], -1, -1)], 1) + self.pos_embed
        for blk in self.blocks:
            t = blk(t)
        return self.head(self.norm(t)[:, -1])


Backbone = Literal["vit", "adventurer"]


def build(backbone: Backbone, *, image_size: int, patch: int, impl: Impl = "auto", **kw) -> nn.Module:
    if backbone == "vit":
        return TinyViT(image_size=image_size, patch=patch, **kw)
    if backbone == "adventurer":
        return TinyAdventurer(image_size=image_size, patch=patch, impl=impl, **kw)
    raise ValueError(f"unknown backbone {backbone!r}")


def forward_flops(model: nn.Module, image_size: int, in_chans: int = 1) -> int:
    """FLOPs of one image's forward pass: matmuls/convs counted by torch, plus the scan analytically.

    The scan term is 2·L·inner·N for the state update's outer product, L·inner·N for the decay
    and 2·L·inner·N for the C contraction, per Adventurer block (L = N_tokens + 2).
    """
    from torch.utils.flop_counter import FlopCounterMode

    was = model.training
    model.train()  # (nn.TransformerEncoderLayer's eval fast path hides its matmuls from the counter)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, in_chans, image_size, image_size))
    model.train(was)
    total = counter.get_total_flops()
    for blk in getattr(model, "blocks", []):
        if isinstance(blk, AdventurerBlock) and blk.mixer_len is not None:
            total += 5 * blk.mixer_len * blk.mixer.inner * blk.mixer.d_state
    return int(total)
