"""Random operands for the selective-scan tests (imported by the test modules)."""

from __future__ import annotations

import torch


def operands(
    b: int, d: int, L: int, n: int, *, heads: int | None = None, seed: int = 0, full: bool = True
) -> dict[str, torch.Tensor | None]:
    """u, delta, A, B, C, D, z, delta_bias; ``heads`` set → the Mamba-2 scalar-A-per-head variant."""
    g = torch.Generator().manual_seed(seed)
    h = heads or d
    a = -torch.exp(torch.rand(h, generator=g) * 2) if heads else -torch.exp(torch.rand(d, n, generator=g) * 2)
    return {
        "u": torch.randn(b, d, L, generator=g),
        "delta": torch.randn(b, h, L, generator=g) * 0.5,
        "A": a,
        "B": torch.randn(b, n, L, generator=g),
        "C": torch.randn(b, n, L, generator=g),
        "D": torch.randn(d, generator=g) if full else None,
        "z": torch.randn(b, d, L, generator=g) if full else None,
        "delta_bias": torch.randn(h, generator=g) * 0.5 if full else None,
    }


ORDER = ("u", "delta", "A", "B", "C", "D", "z", "delta_bias")


def args(ops: dict[str, torch.Tensor | None]) -> list[torch.Tensor | None]:
    return [ops[k] for k in ORDER]
