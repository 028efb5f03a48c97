"""The digits backbone (spec §6) and LwF's growing training heads.

Backbone, input (N, 1, 8, 8):
    conv3x3(1→c1)+BN+ReLU → conv3x3(c1→c2)+BN+ReLU → maxpool 2 → conv3x3(c2→c3)+BN+ReLU → global avg pool
giving d = c3 features (ReLU outputs, no extra nonlinearity: the reference's ``fe_size = 0``).

Heads grow by one block of rows per task. :class:`CosineHead` is the reference's training head
(logits = σ · cos(x, w_c), one learnable σ); :class:`LinearHead` is the plain alternative.
These heads are only used for representation learning and for the plain-LwF arm; DPCR itself
classifies with the ridge classifier of ``ridge.py``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class SmallCNN(nn.Module):
    """Three-conv digits backbone; ``forward`` returns (N, d) features."""

    def __init__(self, channels: tuple[int, int, int] = (32, 64, 64), in_channels: int = 1) -> None:
        super().__init__()
        c1, c2, c3 = channels

        def block(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.features = nn.Sequential(
            *block(in_channels, c1),
            *block(c1, c2),
            nn.MaxPool2d(2),
            *block(c2, c3),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.out_dim = c3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


class _GrowingHead(nn.Module):
    """Rows of a classifier stored per task so that new classes append a new block."""

    def __init__(self, in_dim: int) -> None:
        super().__init__()
        self.in_dim = in_dim
        self.blocks = nn.ParameterList()

    @property
    def n_classes(self) -> int:
        return sum(b.shape[0] for b in self.blocks)

    def device(self) -> torch.device:
        """Where the head's parameters live (the CPU before it has any)."""
        for p in self.parameters():
            return p.device
        return torch.device("cpu")

    def add_classes(self, n: int) -> None:
        """Append ``n`` rows, drawn on the CPU (the same numbers on every device) and moved to the head's device."""
        w = torch.empty(n, self.in_dim)
        nn.init.kaiming_uniform_(w, a=5**0.5)
        self.blocks.append(nn.Parameter(w.to(self.device())))

    def weight(self) -> torch.Tensor:
        return torch.cat(list(self.blocks), dim=0)


class CosineHead(_GrowingHead):
    """logits_c = σ · ⟨x/‖x‖, w_c/‖w_c‖⟩ with one learnable scale σ."""

    def __init__(self, in_dim: int, scale_init: float = 1.0) -> None:
        super().__init__(in_dim)
        self.sigma = nn.Parameter(torch.tensor(float(scale_init)))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.sigma * F.linear(F.normalize(feats, dim=1), F.normalize(self.weight(), dim=1))


class LinearHead(_GrowingHead):
    """logits = x Wᵀ + b (bias per class, grown with the weights)."""

    def __init__(self, in_dim: int) -> None:
        super().__init__(in_dim)
        self.biases = nn.ParameterList()

    def add_classes(self, n: int) -> None:
        super().add_classes(n)
        self.biases.append(nn.Parameter(torch.zeros(n, device=self.device())))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return F.linear(feats, self.weight(), torch.cat(list(self.biases)))


class Net(nn.Module):
    """Backbone + training head; ``features`` and ``logits`` are the two views the method needs."""

    def __init__(self, backbone: nn.Module, head: _GrowingHead) -> None:
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


def build_net(channels: tuple[int, int, int], head: str, cosine_scale_init: float = 1.0, in_channels: int = 1) -> Net:
    backbone = SmallCNN(channels, in_channels=in_channels)
    h = CosineHead(backbone.out_dim, cosine_scale_init) if head == "cosine" else LinearHead(backbone.out_dim)
    return Net(backbone, h)
