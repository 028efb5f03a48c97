"""A minimal LoRA wrapper (spec gmail.md §6: "write a minimal LoRA wrapper; peft is not assumed").

``LoRALinear(base, r, alpha)`` computes ``base(x) + (α/r)·x·Aᵀ·Bᵀ`` with the base weights frozen,
A (r × d_in) Kaiming-uniform and B (d_out × r) zero, so a fresh adapter leaves the layer's output
unchanged (spec §7.3). Trainable parameters per adapted matrix: r·(d_in + d_out).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

#: The attention projections of a transformers CLIP encoder layer (``CLIPAttention``).
ATTENTION_TARGETS = ("q_proj", "k_proj", "v_proj", "out_proj")


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank update B·A."""

    def __init__(self, base: nn.Linear, r: int = 4, alpha: float = 4.0):
        super().__init__()
        if r < 1:
            raise ValueError(f"LoRA rank must be >= 1, got {r}")
        self.base = base.requires_grad_(False)
        self.r, self.scale = r, alpha / r
        a = torch.empty(r, base.in_features)
        nn.init.kaiming_uniform_(a, a=math.sqrt(5))  # drawn on the CPU: the same A wherever the base lives
        device = base.weight.device
        self.lora_a = nn.Parameter(a.to(device))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, r, device=device))

    @property
    def in_features(self) -> int:
        return self.base.in_features

    @property
    def out_features(self) -> int:
        return self.base.out_features

    @property
    def weight(self) -> torch.Tensor:
        """The merged weight W + (α/r)·B·A (read by code that inspects ``.weight``)."""
        return self.base.weight + self.scale * self.lora_b @ self.lora_a

    @property
    def bias(self) -> torch.Tensor | None:
        return self.base.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.scale * (x @ self.lora_a.t()) @ self.lora_b.t()


def add_lora(module: nn.Module, r: int, alpha: float, targets: Iterable[str] = ATTENTION_TARGETS) -> list[str]:
    """Freeze ``module`` and replace every ``nn.Linear`` whose attribute name is in ``targets`` by a LoRALinear.

    Returns the dotted names of the adapted layers.
    """
    module.requires_grad_(False)
    targets = set(targets)
    adapted = []
    for name, parent in list(module.named_modules()):
        for child_name, child in list(parent.named_children()):
            if child_name in targets and isinstance(child, nn.Linear):
                setattr(parent, child_name, LoRALinear(child, r, alpha))
                adapted.append(f"{name}.{child_name}" if name else child_name)
    if not adapted:
        raise ValueError(f"no nn.Linear named {sorted(targets)} in {type(module).__name__}")
    return adapted


def lora_parameters(module: nn.Module) -> list[nn.Parameter]:
    """The A and B matrices of every LoRALinear inside ``module``."""
    return [p for m in module.modules() if isinstance(m, LoRALinear) for p in (m.lora_a, m.lora_b)]


def expected_lora_count(module: nn.Module) -> int:
    """Σ r·(d_in + d_out) over the adapted matrices."""
    return sum(m.r * (m.in_features + m.out_features) for m in module.modules() if isinstance(m, LoRALinear))
