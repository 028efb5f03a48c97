"""CoOp's prompt learner over a :class:`~methods.vlm.backbone.CLIPBackbone` text tower (spec dor.md §6).

A prompt for name c is ``<bos> [V]_1 … [V]_n c . <eos>``: the token embeddings of the n positions
after BOS are replaced by n learnable context vectors shared by all classes; positional
embeddings, the causal mask, pooling at the end-of-text position and the projection are the
backbone's own. Only the context vectors are trainable; the backbone stays frozen. ``init``
copies the token embeddings of a phrase (``"a photo of a"``: n = its token count, so the
initial prompt *is* the zero-shot template) or draws N(0, 0.02²) (CoOp's random init).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class PromptLearner(nn.Module):
    """Learnable context vectors, and the text features they give any list of names."""

    def __init__(self, backbone, *, n_ctx: int = 4, init: str | None = "a photo of a", seed: int = 0):
        super().__init__()
        object.__setattr__(self, "backbone", backbone)  # not a submodule: its weights are not ours
        backbone.requires_grad_(False)
        if init:
            ids = backbone.tokenize([init])[0]
            eos = int(backbone.eos_positions(ids[None])[0])
            with torch.no_grad():
                ctx = backbone.token_embeddings(ids[1:eos]).clone()
            n_ctx = ctx.shape[0]
        else:
            g = torch.Generator().manual_seed(seed)
            ctx = torch.randn(n_ctx, backbone.text_width, generator=g) * 0.02
        self.n_ctx = n_ctx
        self.init = init
        self.ctx = nn.Parameter(ctx)
        self._cache: dict[tuple[str, ...], tuple[torch.Tensor, torch.Tensor]] = {}

    def _frozen_parts(self, names: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        key = tuple(names)
        if key not in self._cache:
            placeholder = " ".join(["x"] * self.n_ctx)
            tokens = self.backbone.tokenize([f"{placeholder} {n.replace('_', ' ')}." for n in names])
            with torch.no_grad():
                embeds = self.backbone.token_embeddings(tokens)
            parts = (embeds, self.backbone.eos_positions(tokens).to(embeds.device))  # both where the backbone is
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = parts
        return self._cache[key]

    def forward(self, names: Sequence[str], *, normalize: bool = True) -> torch.Tensor:
        """(len(names), d) text features of the prompted names."""
        embeds, eos = self._frozen_parts(names)
        n = len(names)
        prompted = torch.cat(
            [embeds[:, :1], self.ctx.unsqueeze(0).expand(n, -1, -1), embeds[:, 1 + self.n_ctx :]], dim=1
        )
        return self.backbone.encode_text_embeddings(prompted, eos, normalize=normalize)
