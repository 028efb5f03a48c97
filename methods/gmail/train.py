"""Stage 1 (Gen-CLIP alignment of f_g) and stage 2 (contrastive text-side tuning), spec gmail.md §3.2–§3.3.

Both use the spec's optimiser: AdamW (weight decay 0.01), cosine annealing with warm restarts
(``restarts`` equal cycles over the run), gradient-norm clipping at 1. That schedule is why the loop
is :func:`optimise` here rather than :func:`core.train.fit` (warm-up + one cosine).

* :func:`stage1` — L = L_align(f_g(x_g), f_r(x_r)) + μ·L_CLIP(f_g(x_g), h(y)); f_r and h are frozen,
  their embeddings computed once; gradients reach only f_g's LoRA and Proj for Gen.
  ``align=False`` drops L_align (baseline (iii), the dual encoder without alignment).
* :func:`stage2` — a copy of the text tower with LoRA (r) on q/k/v/out plus both image projections
  (Proj for Real, Proj for Gen) trained with CLIP's loss on one arm's (image, caption) pairs; the
  image towers stay frozen, so their pooled features are computed once (spec §3.3's default
  "text-encoder LoRA + both projections").
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from methods.gmail.losses import align_loss, clip_loss
from methods.gmail.model import GmailEncoders, batched

log = logging.getLogger(__name__)


def optimise(
    params: Sequence[nn.Parameter],
    loss_at: Callable[[int], torch.Tensor],
    *,
    steps: int,
    lr: float,
    weight_decay: float,
    restarts: int = 1,
    clip: float = 1.0,
    progress=None,
    message: str = "step",
) -> list[float]:
    """AdamW + CosineAnnealingWarmRestarts (T_0 = ⌈steps / restarts⌉) + grad clipping; the loss of every step."""
    params = [p for p in params if p.requires_grad]
    if not params:
        raise ValueError("nothing to train: no parameter requires grad")
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=max(1, math.ceil(steps / restarts)))
    losses = []
    for step in range(steps):
        loss = loss_at(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress((step + 1) / steps, f"{message} {step + 1}/{steps} loss {losses[-1]:.3f}")
    return losses


def stage1(
    enc: GmailEncoders,
    gen: torch.Tensor,
    real_emb: torch.Tensor,
    text_emb: torch.Tensor,
    cfg,
    *,
    align: bool = True,
    progress=None,
) -> dict[str, list[float]]:
    """Train f_g on generated images ``gen`` (n, 3, H, W) against frozen f_r targets ``real_emb`` (n, d).

    ``text_emb`` (n, k, d): k caption embeddings h(y) per pair; each step draws one per pair.
    Returns the per-step total, L_align and L_CLIP.
    """
    if not align and cfg.mu == 0:
        return {"total": [], "align": [], "clip": []}
    g = torch.Generator().manual_seed(cfg.seed)
    scale = enc.backbone.logit_scale
    parts: dict[str, list[float]] = {"align": [], "clip": []}
    real_emb, text_emb = real_emb.detach(), text_emb.detach()
    enc.gen_vision.train()

    def loss_at(_step: int) -> torch.Tensor:
        idx = torch.randperm(len(gen), generator=g)[: cfg.batch_size]
        z = enc.f_g(gen[idx])
        la = align_loss(z, real_emb[idx], cfg.tau) if align else z.new_zeros(())
        pick = torch.randint(0, text_emb.shape[1], (len(idx),), generator=g)
        lc = clip_loss(z, text_emb[idx, pick], scale) if cfg.mu > 0 else z.new_zeros(())
        parts["align"].append(float(la.detach()))
        parts["clip"].append(float(lc.detach()))
        return la + cfg.mu * lc

    total = optimise(enc.trainable_parameters(), loss_at, steps=cfg.stage1_steps, lr=cfg.lr,
                     weight_decay=cfg.weight_decay, restarts=cfg.restarts, progress=progress,
                     message="stage 1" if align else "stage 1 (no L_align)")  # fmt: skip
    enc.eval()
    return {"total": total, **parts}


class TextTuned(nn.Module):
    """Stage 2's trainable model: the backbone's text tower with LoRA + Proj for Real + Proj for Gen."""

    def __init__(self, backbone, proj_gen: nn.Module, *, rank: int, alpha: float):
        super().__init__()
        from methods.gmail.lora import add_lora

        self.backbone = copy.deepcopy(backbone).requires_grad_(False)
        add_lora(self.backbone.model.text_model, rank, alpha)
        self.proj_real = copy.deepcopy(backbone.model.visual_projection).requires_grad_(True)
        self.proj_gen = copy.deepcopy(proj_gen).requires_grad_(True)

    def image(self, pooled: torch.Tensor, modality: str) -> torch.Tensor:
        proj = self.proj_gen if modality == "generated" else self.proj_real
        return F.normalize(proj(pooled), dim=-1)

    def text(self, texts: Sequence[str]) -> torch.Tensor:
        return self.backbone.encode_text(self.backbone.tokenize(texts))

    @torch.no_grad()
    def text_features(self, texts: Sequence[str], batch_size: int = 512) -> torch.Tensor:
        texts = list(texts)
        return torch.cat([self.text(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)])


def stage2(
    backbone,
    proj_gen: nn.Module,
    pooled: torch.Tensor,
    modality: str,
    captions: list[list[str]],
    cfg,
    *,
    progress=None,
) -> tuple[TextTuned, list[float]]:
    """CLIP-loss tuning of text LoRA + projections on (pooled image features of one arm, captions)."""
    torch.manual_seed(cfg.seed)
    model = TextTuned(backbone, proj_gen, rank=cfg.rank, alpha=cfg.lora_alpha)
    rng = np.random.default_rng(cfg.seed)
    scale = backbone.logit_scale
    model.train()

    def loss_at(_step: int) -> torch.Tensor:
        idx = rng.permutation(len(pooled))[: cfg.batch_size]
        texts = [captions[i][rng.integers(len(captions[i]))] for i in idx]
        return clip_loss(model.image(pooled[torch.as_tensor(idx)], modality), model.text(texts), scale)

    losses = optimise(list(model.parameters()), loss_at, steps=cfg.stage2_steps, lr=cfg.lr,
                      weight_decay=cfg.weight_decay, restarts=cfg.restarts, progress=progress, message="stage 2")  # fmt: skip
    return model.eval(), losses


@torch.no_grad()
def caption_embeddings(backbone, captions: list[list[str]], per_pair: Sequence[int] = (1, -1)) -> torch.Tensor:
    """(n, k, d) frozen h(y) for caption indices ``per_pair`` of each pair (−1: the most specific one)."""
    from methods.vlm.zeroshot import text_features

    cols = []
    for j in per_pair:
        texts = [(c[5] if len(c) > 5 else c[3]) if j == -1 else c[j] for c in captions]
        cols.append(text_features(backbone, texts))
    return torch.stack(cols, dim=1)


def pooled_features(fn, images: torch.Tensor) -> torch.Tensor:
    """Pooled tower features of ``images`` (no gradients, batches of 512)."""
    return batched(fn, images)
