"""The two image modalities (spec gmail.md §3.1, §3.4).

* f_r — the pretrained tiny CLIP's vision tower + its projection ("Projection for Real"), frozen;
* f_g — a deep copy of the same tower with LoRA (rank r) on every attention q/k/v/out projection,
  plus its own copy of the projection ("Projection for Gen"); only the LoRA A/B and Proj-for-Gen train.

:meth:`GmailEncoders.real_pooled` is the inference router of Algorithm 1: real images go through
f_r's tower when ``real_inference_encoder == "original"`` (the default) and never touch f_g; the
switch ``"lora"`` (the one sentence of §3.2) sends them through f_g's LoRA tower instead, still
with Proj for Real.
"""

from __future__ import annotations

import copy
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from methods.gmail.lora import ATTENTION_TARGETS, add_lora, lora_parameters

RealEncoder = Literal["original", "lora"]


class GmailEncoders(nn.Module):
    """f_r (the frozen backbone) and f_g (its LoRA copy with Proj for Gen)."""

    def __init__(self, backbone, *, rank: int = 4, alpha: float = 4.0):
        super().__init__()
        self.backbone = backbone.requires_grad_(False)
        self.gen_vision = copy.deepcopy(backbone.model.vision_model)
        self.adapted = add_lora(self.gen_vision, rank, alpha, ATTENTION_TARGETS)
        self.gen_proj = copy.deepcopy(backbone.model.visual_projection).requires_grad_(True)

    # --- towers (pooled features before the projection) ------------------------
    def real_tower(self, images: torch.Tensor) -> torch.Tensor:
        """f_r's pooled (pre-projection) features."""
        return self.backbone.model.vision_model(pixel_values=self.backbone.preprocess(images)).pooler_output

    def gen_tower(self, images: torch.Tensor) -> torch.Tensor:
        """f_g's pooled (pre-projection) features (LoRA tower)."""
        return self.gen_vision(pixel_values=self.backbone.preprocess(images)).pooler_output

    # --- the two modalities ----------------------------------------------------
    def f_r(self, images: torch.Tensor) -> torch.Tensor:
        """Real-image embeddings: f_r tower + Proj for Real, L2-normalised."""
        return F.normalize(self.backbone.model.visual_projection(self.real_tower(images)), dim=-1)

    def f_g(self, images: torch.Tensor) -> torch.Tensor:
        """Generated-image embeddings: LoRA tower + Proj for Gen, L2-normalised."""
        return F.normalize(self.gen_proj(self.gen_tower(images)), dim=-1)

    def real_pooled(self, images: torch.Tensor, real_inference_encoder: RealEncoder = "original") -> torch.Tensor:
        """The router for real images at inference (Algorithm 1 lines 14–18): f_r's tower unless told "lora"."""
        if real_inference_encoder == "original":
            return self.real_tower(images)
        if real_inference_encoder == "lora":
            return self.gen_tower(images)
        raise ValueError(f"real_inference_encoder must be 'original' or 'lora', got {real_inference_encoder!r}")

    def encode(
        self,
        images: torch.Tensor,
        modality: Literal["real", "generated"],
        real_inference_encoder: RealEncoder = "original",
    ) -> torch.Tensor:
        """Embeddings of ``images`` by modality: generated → f_g; real → the router + Proj for Real."""
        if modality == "generated":
            return self.f_g(images)
        if modality == "real":
            pooled = self.real_pooled(images, real_inference_encoder)
            return F.normalize(self.backbone.model.visual_projection(pooled), dim=-1)
        raise ValueError(f"modality must be 'real' or 'generated', got {modality!r}")

    def trainable_parameters(self) -> list[nn.Parameter]:
        """What stage 1 trains: f_g's LoRA matrices and Proj for Gen."""
        return lora_parameters(self.gen_vision) + list(self.gen_proj.parameters())


@torch.no_grad()
def batched(fn, images: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
    """``fn`` over ``images`` in batches, without gradients."""
    return torch.cat([fn(images[i : i + batch_size]) for i in range(0, len(images), batch_size)])
