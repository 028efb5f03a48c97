"""AdaptFormer adapters on the CLIP text encoder (spec §3.1, the baseline framework's text side).

AdaptFormer (Chen et al., 2022) adds a bottleneck MLP in parallel to the FFN of every block:
with x' the residual stream after attention, the block outputs
x' + MLP(LN2(x')) + s·up(ReLU(down(x'))). The CLIP weights stay frozen; ``up`` starts at zero,
so before training the adapted text features equal the zero-shot ones. The adapters are attached
with forward hooks on each text block's ``layer_norm2`` (captures x') and ``mlp`` (adds the
branch), so the substrate's model code is untouched; the image tower gets no adapter.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn


class Adapter(nn.Module):
    """down (d → r) → ReLU → up (r → d), scaled by s; up initialised to zero."""

    def __init__(self, width: int, bottleneck: int, scale: float):
        super().__init__()
        self.down = nn.Linear(width, bottleneck)
        self.up = nn.Linear(bottleneck, width)
        self.scale = float(scale)
        nn.init.zeros_(self.up.weight)
        nn.init.zeros_(self.up.bias)
        nn.init.zeros_(self.down.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * self.up(torch.relu(self.down(x)))


class TextAdapters(nn.Module):
    """One :class:`Adapter` per text-encoder block of a :class:`~methods.vlm.backbone.CLIPBackbone`."""

    def __init__(self, backbone, bottleneck: int = 64, scale: float = 0.1):
        super().__init__()
        layers = backbone.model.text_model.encoder.layers
        width = int(backbone.model.config.text_config.hidden_size)
        self.adapters = nn.ModuleList(Adapter(width, bottleneck, scale) for _ in layers)
        self.enabled = True
        self._inputs: dict[int, torch.Tensor] = {}
        self._handles = []
        for i, layer in enumerate(layers):
            self._handles.append(layer.layer_norm2.register_forward_pre_hook(self._capture(i)))
            self._handles.append(layer.mlp.register_forward_hook(self._add(i)))

    def _capture(self, i: int):
        def hook(module, args):
            self._inputs[i] = args[0]

        return hook

    def _add(self, i: int):
        def hook(module, args, output):
            x = self._inputs.pop(i)
            return output + self.adapters[i](x) if self.enabled else output

        return hook

    @contextlib.contextmanager
    def disabled(self) -> Iterator[None]:
        """Run the text encoder without the adapters (zero-shot CLIP)."""
        before, self.enabled = self.enabled, False
        try:
            yield
        finally:
            self.enabled = before

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
