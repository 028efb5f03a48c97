"""The tiny two-stream vision-language model (METER-like, spec §6) with switchable sub-layers.

Vision ViT (patch embedding, [CLS], learned positions) and a bidirectional text Transformer encode
their inputs separately; fusion layers let the text stream attend to the image tokens (self-attention,
cross-attention, FFN per layer); the fused text [CLS] feeds the ITM head and the task heads.

Every fine-grained layer — each MHSA and FFN sub-layer of the three encoders and each cross-attention
sub-layer of the fusion encoder — is one bit of the ALF genome (spec §3.2). A switched-off sub-layer
skips its residual branch: ``x + f(LN(x))`` becomes ``x``. Embeddings and heads are never in the genome.

Patches: :meth:`DoubleFilterVLP.encode_image` takes ``keep`` (n, k) sorted patch indices (IPF); the
kept patches get their own position embeddings (index 1 + p), so dropping never shifts a position.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from methods.double_filter.config import ModelConfig

MEAN, STD = 0.5, 0.25


class Attention(nn.Module):
    """Multi-head attention; ``ctx`` given → cross-attention (queries from x, keys/values from ctx)."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.o = nn.Linear(width, width)

    def forward(self, x, ctx=None, pad=None, return_attn: bool = False):
        ctx = x if ctx is None else ctx
        n, lq, w = x.shape
        h = self.heads

        def split(t):
            return t.view(n, -1, h, w // h).transpose(1, 2)  # (n, h, L, d)

        q, k, v = split(self.q(x)), split(self.k(ctx)), split(self.v(ctx))
        att = (q @ k.transpose(-1, -2)) / (w // h) ** 0.5
        if pad is not None:  # (n, Lk) True = padding
            att = att.masked_fill(pad[:, None, None, :], float("-inf"))
        att = att.softmax(-1)
        out = self.o((att @ v).transpose(1, 2).reshape(n, lq, w))
        return (out, att) if return_attn else out


class MLP(nn.Module):
    def __init__(self, width: int, ratio: int):
        super().__init__()
        self.fc1 = nn.Linear(width, width * ratio)
        self.fc2 = nn.Linear(width * ratio, width)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    """Pre-LN encoder block: x + MHSA(LN x) [bit ``attn_on``], then x + FFN(LN x) [bit ``ffn_on``]."""

    def __init__(self, width: int, heads: int, ratio: int):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(width), Attention(width, heads)
        self.ln2, self.ffn = nn.LayerNorm(width), MLP(width, ratio)
        self.attn_on, self.ffn_on = True, True

    def forward(self, x, pad=None):
        if self.attn_on:
            x = x + self.attn(self.ln1(x), pad=pad)
        if self.ffn_on:
            x = x + self.ffn(self.ln2(x))
        return x


class FusionBlock(nn.Module):
    """Text-side fusion block: self-attention, cross-attention to the image tokens, FFN (three bits)."""

    def __init__(self, width: int, heads: int, ratio: int):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(width), Attention(width, heads)
        self.lnx, self.xattn = nn.LayerNorm(width), Attention(width, heads)
        self.ln2, self.ffn = nn.LayerNorm(width), MLP(width, ratio)
        self.attn_on, self.xattn_on, self.ffn_on = True, True, True

    def forward(self, x, pad, img):
        if self.attn_on:
            x = x + self.attn(self.ln1(x), pad=pad)
        if self.xattn_on:
            x = x + self.xattn(self.lnx(x), ctx=img)
        if self.ffn_on:
            x = x + self.ffn(self.ln2(x))
        return x


@dataclass(frozen=True)
class SubLayer:
    """One gene: the encoder it belongs to, its block index and kind (``mhsa``, ``ffn``, ``cross``)."""

    group: str
    block: int
    kind: str

    @property
    def name(self) -> str:
        return f"{self.group}.{self.block}.{self.kind}"


class DoubleFilterVLP(nn.Module):
    """Vision ViT + text Transformer + fusion encoder, with ITC projections and an ITM head."""

    def __init__(self, cfg: ModelConfig, vocab_size: int):
        super().__init__()
        self.cfg = cfg
        w, p = cfg.width, cfg.patch_size
        self.n_patches = (cfg.image_size // p) ** 2
        self.patch_embed = nn.Conv2d(3, w, p, p)
        self.cls_img = nn.Parameter(torch.zeros(1, 1, w))
        self.pos_img = nn.Parameter(torch.randn(1, self.n_patches + 1, w) * 0.02)
        self.vision = nn.ModuleList(Block(w, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.vision_layers))
        self.ln_v = nn.LayerNorm(w)
        self.tok_embed = nn.Embedding(vocab_size, w)
        self.pos_txt = nn.Parameter(torch.randn(1, cfg.context_length, w) * 0.02)
        self.text = nn.ModuleList(Block(w, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.text_layers))
        self.ln_t = nn.LayerNorm(w)
        self.fusion = nn.ModuleList(FusionBlock(w, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.fusion_layers))
        self.ln_f = nn.LayerNorm(w)
        self.img_proj = nn.Linear(w, cfg.embed_dim)
        self.txt_proj = nn.Linear(w, cfg.embed_dim)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))  # log(1/0.07)
        self.itm_head = nn.Linear(w, 2)

    # --- the genome ------------------------------------------------------------------------------
    def sublayers(self) -> list[SubLayer]:
        """The genome's order: vision (mhsa, ffn) per block, text (mhsa, ffn), fusion (mhsa, cross, ffn)."""
        out = []
        for i in range(len(self.vision)):
            out += [SubLayer("vision", i, "mhsa"), SubLayer("vision", i, "ffn")]
        for i in range(len(self.text)):
            out += [SubLayer("text", i, "mhsa"), SubLayer("text", i, "ffn")]
        for i in range(len(self.fusion)):
            out += [SubLayer("fusion", i, "mhsa"), SubLayer("fusion", i, "cross"), SubLayer("fusion", i, "ffn")]
        return out

    def _flag(self, s: SubLayer) -> tuple[nn.Module, str]:
        block = getattr(self, s.group)[s.block]
        return block, {"mhsa": "attn_on", "ffn": "ffn_on", "cross": "xattn_on"}[s.kind]

    def set_genome(self, genome) -> None:
        """Switch sub-layers on (1) or off (0) in :meth:`sublayers` order."""
        subs = self.sublayers()
        genome = [int(g) for g in genome]
        if len(genome) != len(subs) or any(g not in (0, 1) for g in genome):
            raise ValueError(f"genome must be {len(subs)} bits, got {genome}")
        for s, g in zip(subs, genome, strict=True):
            block, attr = self._flag(s)
            setattr(block, attr, bool(g))

    def genome(self) -> list[int]:
        return [int(getattr(*self._flag(s))) for s in self.sublayers()]

    # --- encoders --------------------------------------------------------------------------------
    def patch_tokens(self, images: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        """(n, 3, H, W) in [0, 1] → (n, k, w) embeddings + positions of the ``keep`` patches (all if ``None``).

        The patches are cut out (row-major, index p = row · H/P + col) and only the kept ones are
        embedded (the same linear map as a stride-P convolution); patch p gets position 1 + p.
        """
        p = self.cfg.patch_size
        x = F.unfold((images - MEAN) / STD, p, stride=p).transpose(1, 2)  # (n, N, 3P²)
        pos = self.pos_img[:, 1:].expand(x.shape[0], -1, -1)
        if keep is not None:
            x = torch.gather(x, 1, keep[..., None].expand(-1, -1, x.shape[-1]))
            pos = torch.gather(pos, 1, keep[..., None].expand(-1, -1, pos.shape[-1]))
        w = self.patch_embed.weight
        return x @ w.view(w.shape[0], -1).T + self.patch_embed.bias + pos

    def encode_image(self, images: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        """(n, 1 + k, w) image tokens; ``keep`` (n, k) patch indices (IPF), ``None`` = all N patches.

        Dropped patches are removed before the first block; patch ``p`` always gets position ``1 + p``.
        """
        x = self.patch_tokens(images, keep)
        cls = (self.cls_img + self.pos_img[:, :1]).expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], 1)
        for blk in self.vision:
            x = blk(x)
        return self.ln_v(x)

    @torch.no_grad()
    def cls_attention(self, images: torch.Tensor, layers: int = 1) -> torch.Tensor:
        """(n, N) patch importance a_p: [CLS]→patch attention of block ``layers``−1, head-averaged, Σ_p a_p = 1.

        Runs only the first ``layers`` blocks on all patches (always on, whatever the genome).
        """
        x = self.patch_tokens(images)
        x = torch.cat([(self.cls_img + self.pos_img[:, :1]).expand(x.shape[0], -1, -1), x], 1)
        for blk in self.vision[: layers - 1]:
            x = x + blk.attn(blk.ln1(x))
            x = x + blk.ffn(blk.ln2(x))
        blk = self.vision[layers - 1]
        _, att = blk.attn(blk.ln1(x), return_attn=True)
        a = att.mean(1)[:, 0, 1:]  # CLS row, patches only
        return a / a.sum(-1, keepdim=True)

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(n, L, w) text tokens (token 0 is <bos>, used as [CLS]) and the (n, L) padding mask."""
        tokens = tokens[:, : self.cfg.context_length]
        pad = tokens == 0
        x = self.tok_embed(tokens) + self.pos_txt[:, : tokens.shape[1]]
        for blk in self.text:
            x = blk(x, pad)
        return self.ln_t(x), pad

    def fuse(self, txt: torch.Tensor, pad: torch.Tensor, img: torch.Tensor) -> torch.Tensor:
        """Fused text [CLS] (n, w): the text stream attends to the image tokens."""
        x = txt
        for blk in self.fusion:
            x = blk(x, pad, img)
        return self.ln_f(x)[:, 0]

    def itc_features(self, img: torch.Tensor, txt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return F.normalize(self.img_proj(img[:, 0]), dim=-1), F.normalize(self.txt_proj(txt[:, 0]), dim=-1)


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
