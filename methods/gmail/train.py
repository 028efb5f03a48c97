"""Stage 1 (Gen-CLIP alignment of f_g) and stage 2 (contrastive text-side tuning), spec gmail.md §3.2–§3.3.

Both use the spec's optimiser: AdamW (weight decay 0.01), cosine annealing with warm restarts
(``restarts`` equal cycles over the run, :func:`warm_restarts`: the rates of torch's
``CosineAnnealingWarmRestarts``), gradient-norm clipping at 1, through :func:`core.train.fit` on the
caller's device (``device`` / ``amp``); losses stay on the device until the end of the stage.

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
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from methods.gmail.losses import align_loss, clip_loss
from methods.gmail.model import GmailEncoders, batched

log = logging.getLogger(__name__)


def warm_restarts(steps: int, restarts: int = 1):
    """The :data:`core.train.Schedule` of ``CosineAnnealingWarmRestarts(T_0 = ⌈steps / restarts⌉)`` stepped once per step.

    Step ``s`` runs at ``base · (1 + cos(π · (s mod T_0) / T_0)) / 2`` — the value torch's scheduler
    sets (the same expression, so the same float).
    """
    t_0 = max(1, math.ceil(steps / restarts))

    def schedule(step: int, base_lr: float) -> float:
        return 0 + (base_lr - 0) * (1 + math.cos(math.pi * (step % t_0) / t_0)) / 2

    return schedule


def optimise(
    model: nn.Module,
    params: Sequence[nn.Parameter],
    batches: Callable[[int], Any],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    *,
    steps: int,
    lr: float,
    weight_decay: float,
    restarts: int = 1,
    clip: float = 1.0,
    device: Any = None,
    amp: str = "off",
    progress=None,
    message: str = "step",
) -> list[float]:
    """:func:`core.train.fit` with AdamW + cosine warm restarts + grad clipping over ``params``; the loss of every step.

    ``model`` is the module put in train mode (and moved to ``device``); only ``params`` train.
    """
    from core.train import fit

    params = [p for p in params if p.requires_grad]
    if not params:
        raise ValueError("nothing to train: no parameter requires grad")
    return fit(model, batches, loss_fn, steps=steps, lr=lr, weight_decay=weight_decay, clip=clip,
               schedule=warm_restarts(steps, restarts), param_groups=[{"params": params}], device=device, amp=amp,
               progress=progress, message=message)  # fmt: skip


def stage1(
    enc: GmailEncoders,
    gen: torch.Tensor,
    real_emb: torch.Tensor,
    text_emb: torch.Tensor,
    cfg,
    *,
    align: bool = True,
    device: Any = None,
    amp: str = "off",
    progress=None,
) -> dict[str, list[float]]:
    """Train f_g on generated images ``gen`` (n, 3, H, W) against frozen f_r targets ``real_emb`` (n, d).

    ``text_emb`` (n, k, d): k caption embeddings h(y) per pair; each step draws one per pair.
    Returns the per-step total, L_align and L_CLIP. Trains on ``device`` (default: where ``enc`` is);
    the data should be there already (indices are drawn on the CPU and moved).
    """
    if not align and cfg.mu == 0:
        return {"total": [], "align": [], "clip": []}
    dev = _device_of(enc) if device is None else device
    g = torch.Generator().manual_seed(cfg.seed)
    scale = enc.backbone.logit_scale
    parts: dict[str, list[torch.Tensor]] = {"align": [], "clip": []}
    real_emb, text_emb = real_emb.detach(), text_emb.detach()
    enc.to(dev)

    def batch(_step: int):
        idx = torch.randperm(len(gen), generator=g)[: cfg.batch_size]
        pick = torch.randint(0, text_emb.shape[1], (len(idx),), generator=g)
        idx, pick = idx.to(gen.device), pick.to(gen.device)
        return gen[idx], real_emb[idx], text_emb[idx, pick]

    def loss_fn(_model, b) -> torch.Tensor:
        images, real, text = b
        z = enc.f_g(images)
        la = align_loss(z, real, cfg.tau) if align else z.new_zeros(())
        lc = clip_loss(z, text, scale) if cfg.mu > 0 else z.new_zeros(())
        parts["align"].append(la.detach())
        parts["clip"].append(lc.detach())
        return la + cfg.mu * lc

    total = optimise(enc.gen_vision, enc.trainable_parameters(), batch, loss_fn, steps=cfg.stage1_steps, lr=cfg.lr,
                     weight_decay=cfg.weight_decay, restarts=cfg.restarts, device=dev, amp=amp, progress=progress,
                     message="stage 1" if align else "stage 1 (no L_align)")  # fmt: skip
    enc.eval()
    return {"total": total, **{k: _floats(v) for k, v in parts.items()}}


def _floats(values: list[torch.Tensor]) -> list[float]:
    """0-dim tensors → floats, in one read-back."""
    return torch.stack(values).float().cpu().tolist() if values else []


def _device_of(module: nn.Module) -> torch.device:
    return next(module.parameters()).device


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
        return self.encode_tokens(self.backbone.tokenize(texts))

    def encode_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """Text features of token rows (moved to the model's device)."""
        return self.backbone.encode_text(tokens.to(self.proj_real.weight.device))

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
    device: Any = None,
    amp: str = "off",
    progress=None,
) -> tuple[TextTuned, list[float]]:
    """CLIP-loss tuning of text LoRA + projections on (pooled image features of one arm, captions), on ``device``
    (default: where ``pooled`` is)."""
    dev = pooled.device if device is None else device
    torch.manual_seed(cfg.seed)
    model = TextTuned(backbone, proj_gen, rank=cfg.rank, alpha=cfg.lora_alpha).to(dev)
    rng = np.random.default_rng(cfg.seed)
    scale = backbone.logit_scale

    def batch(_step: int):
        idx = rng.permutation(len(pooled))[: cfg.batch_size]
        texts = [captions[i][rng.integers(len(captions[i]))] for i in idx]
        return pooled[torch.as_tensor(idx).to(pooled.device)], backbone.tokenize(texts)

    def loss_fn(m: TextTuned, b) -> torch.Tensor:
        images, tokens = b
        return clip_loss(m.image(images, modality), m.encode_tokens(tokens), scale)

    losses = optimise(model, list(model.parameters()), batch, loss_fn, steps=cfg.stage2_steps, lr=cfg.lr,
                      weight_decay=cfg.weight_decay, restarts=cfg.restarts, device=dev, amp=amp, progress=progress,
                      message="stage 2")  # fmt: skip
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
